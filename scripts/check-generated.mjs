// Fails when the committed generated code differs from what `pnpm generate` produces now.
// Runs inside `pnpm generate:check`, so node_modules/.bin (buf, protoc-gen-es) is on PATH.
import { execFileSync } from 'node:child_process';

// The Connect code from proto/, and the admin console's API types from /openapi.json.
const generated = ['packages/contracts/src/gen', 'services/admin-console/src/api/schema.ts'];
execFileSync('buf', ['generate'], { cwd: 'proto', stdio: 'inherit' });
execFileSync(
  'tsx',
  ['--conditions=@gateway/source', 'services/admin-console/scripts/generate-api.ts'],
  { stdio: 'inherit' },
);
const changes = execFileSync('git', ['status', '--porcelain', '--', ...generated], {
  encoding: 'utf8',
});
if (changes.trim() !== '') {
  process.stderr.write(
    `Generated code is stale. Run \`pnpm generate\` and commit the result:\n${changes}`,
  );
  process.exit(1);
}
process.stdout.write('Generated code is up to date.\n');
