import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it, expect } from '@jest/globals';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const entry = pathToFileURL(fileURLToPath(new URL('./index.ts', import.meta.url))).href;

/** Runs loadConfigOrExit in a fresh Node process with only `env` (plus PATH) set. */
function runWithEnv(env: Record<string, string>, require: string[] = []) {
  const script = [
    `import { loadConfigOrExit } from ${JSON.stringify(entry)};`,
    `const config = loadConfigOrExit(process.env, { require: ${JSON.stringify(require)} });`,
    'process.stdout.write(`loaded port=${config.port}\\n`);',
  ].join('\n');
  return spawnSync(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' },
  );
}

describe('loadConfigOrExit', () => {
  it('returns the configuration when the environment is valid', () => {
    const result = runWithEnv({ IDENTITY_ISSUER: 'https://id.example.com', PORT: '8123' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('loaded port=8123\n');
    expect(result.status).toBe(0);
  });

  it('prints each bad variable to stderr and exits with code 1', () => {
    const result = runWithEnv({
      IDENTITY_ISSUER: 'https://id.example.com',
      AUTH_HANDOFF_TTL_SECONDS: '301',
      IDENTITY_SERVICE_KEY: 'Sv-K3y-abc',
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'Configuration error:\n' +
        '  - IDENTITY_SERVICE_KEY: must be at least 32 characters\n' +
        '  - AUTH_HANDOFF_TTL_SECONDS: must be an integer from 30 to 300\n',
    );
    expect(result.stderr).not.toContain('Sv-K3y-abc');
  });

  it('names every missing required variable in one message with one header', () => {
    const result = runWithEnv({ PORT: 'abc' }, ['GATEWAY_ENCRYPTION_KEYS']);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'Configuration error:\n' +
        '  - PORT: must be an integer from 1 to 65535\n' +
        '  - IDENTITY_ISSUER: is required (the deployment identity issuer URL)\n' +
        '  - GATEWAY_ENCRYPTION_KEYS: is required by this process but is not set\n',
    );
  });

  it('reports a missing IDENTITY_ISSUER', () => {
    const result = runWithEnv({});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('  - IDENTITY_ISSUER: is required');
  });
});
