// Prints the README's configuration table from the config package's variable list
// (`pnpm -s config:table`); a test keeps the README equal to it.
import { renderConfigTable } from '@gateway/config';

process.stdout.write(renderConfigTable());
