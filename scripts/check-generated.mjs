// Fails when the committed generated code differs from what `pnpm generate` produces now.
// Runs inside `pnpm generate:check`, so node_modules/.bin (buf, protoc-gen-es) is on PATH.
import { execFileSync } from 'node:child_process';

const generatedDir = 'packages/contracts/src/gen';
execFileSync('buf', ['generate'], { cwd: 'proto', stdio: 'inherit' });
const changes = execFileSync('git', ['status', '--porcelain', '--', generatedDir], {
  encoding: 'utf8',
});
if (changes.trim() !== '') {
  process.stderr.write(
    `Generated code is stale. Run \`pnpm generate\` and commit the result:\n${changes}`,
  );
  process.exit(1);
}
process.stdout.write('Generated code is up to date.\n');
