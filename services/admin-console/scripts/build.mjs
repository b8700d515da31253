// Builds the console's static files into dist/web (the files the edge serves at /admin/).
// Runs as the package's `prepare` script (so `pnpm install` leaves a built console), in the
// workspace's `pnpm build`, and before `pnpm start`. With --if-stale it does nothing when
// dist/web is newer than every source file. A production-only install has no Vite: the
// build is then skipped with a note (the image copies dist/web from its build stage).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const stamp = join(root, 'dist', 'web', 'index.html');
const sources = [
  'index.html',
  'vite.config.ts',
  'src',
  '../dev-identity/src/onboarding-page',
  '../../packages/field-rules/src',
];

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, name)));
  return newest;
}

function isFresh() {
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return sources.every((source) => {
    const path = join(root, source);
    return !existsSync(path) || newestChange(path) <= built;
  });
}

if (!existsSync(join(root, 'index.html'))) {
  // An install that has only the manifests (the image's install stages): nothing to build yet.
  process.stdout.write('admin console: no sources here; not built.\n');
  process.exit(0);
}
if (process.argv.includes('--if-stale') && isFresh()) process.exit(0);
let vite;
try {
  vite = await import('vite');
} catch {
  process.stdout.write('admin console: Vite is not installed (production install); not built.\n');
  process.exit(0);
}
const started = Date.now();
await vite.build({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn' });
process.stdout.write(`admin console: built dist/web in ${Date.now() - started} ms\n`);
