import { createHash } from 'node:crypto';
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/** The onboarding page's browser script, bundled with @gateway/field-rules (and zod). */
export type ClientBundle = {
  /** `onboarding-<first 16 hex of the SHA-256 of the code>.js`: a new name for new code. */
  fileName: string;
  code: string;
};

// Run from TypeScript sources (`pnpm start`, tsx, Jest) this module is a .ts file and the
// client is bundled from its sources, with workspace packages resolved to theirs through
// the `@gateway/source` condition. Run from dist/ (the Docker image) it is a .js file and
// the client is bundled from what `tsc --build` compiled into dist/onboarding-page/client.
const fromSources = fileURLToPath(import.meta.url).endsWith('.ts');
const entryPoint = fileURLToPath(
  new URL(`./client/onboarding-client.${fromSources ? 'ts' : 'js'}`, import.meta.url),
);

let bundled: Promise<ClientBundle> | undefined;

/**
 * The bundle, built once per process on first use (about a tenth of a second) and kept in
 * memory: the code is the same for every environment and every service instance. A failed
 * build is not kept, so the next request tries again.
 */
export function onboardingClientBundle(): Promise<ClientBundle> {
  bundled ??= bundleClient().catch((error: unknown) => {
    bundled = undefined;
    throw error;
  });
  return bundled;
}

async function bundleClient(): Promise<ClientBundle> {
  const result = await build({
    entryPoints: [entryPoint],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: fromSources ? ['@gateway/source'] : [],
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
    plugins: [fieldRulesWithoutSideEffects()],
  });
  const code = result.outputFiles[0]?.text;
  if (code === undefined) throw new Error(`esbuild produced no output for ${entryPoint}`);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  return { fileName: `onboarding-${hash}.js`, code };
}

const resolving = Symbol('resolving');

/**
 * @gateway/field-rules declares no `sideEffects`, so esbuild would keep every module of it
 * and, through the definition schemas, all of zod (about 380 kB). Its modules only define
 * constants and functions: marked free of side effects, whatever the client does not use is
 * dropped, and the bundle holds the value rules alone.
 */
function fieldRulesWithoutSideEffects(): Plugin {
  return {
    name: 'field-rules-without-side-effects',
    setup(plugin) {
      let packageDir: string | undefined;
      plugin.onResolve({ filter: /^@gateway\/field-rules$|^\.\.?\// }, async (args) => {
        if (args.pluginData === resolving) return undefined;
        const isPackage = args.path === '@gateway/field-rules';
        if (!isPackage && (packageDir === undefined || !args.importer.startsWith(packageDir))) {
          return undefined;
        }
        const resolved = await plugin.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: resolving,
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (isPackage) packageDir = `${dirname(resolved.path)}${sep}`;
        return { path: resolved.path, sideEffects: false };
      });
    },
  };
}
