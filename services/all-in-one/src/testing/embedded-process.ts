import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unusedLocalPort, waitFor } from '@gateway/testkit';

// `pnpm start`'s process (services/all-in-one/src/main.ts) for end-to-end tests: the
// embedded gateway, the development identity service on its origin and the demo platform,
// on free ports and a data folder of its own.

export type EmbeddedProcess = {
  /** The gateway (and identity service) origin, `http://localhost:<port>`. */
  gateway: string;
  /** The demo platform's origin. */
  demo: string;
  dataDir: string;
  child: ChildProcess;
  output(): string;
  /** The embedded secrets (`secrets.json` of the data folder). */
  secrets(): Promise<Record<string, string>>;
  /** A token of the identity service's machine client `gateway-admin` with `scope`. */
  adminToken(scope?: string): Promise<string>;
  /** An admin API call with such a token. */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  /** SIGTERM, waits for the exit and removes the data folder. */
  stop(): Promise<void>;
};

const ALL_ADMIN_SCOPES = 'platforms:admin onboarding:schema:read onboarding:schema:write';

/** Starts the process and waits for its first-run banner (printed once all is ready). */
export async function startEmbeddedProcess(
  env: Record<string, string> = {},
): Promise<EmbeddedProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gateway-embedded-'));
  const gatewayPort = await unusedLocalPort();
  const demoPort = await unusedLocalPort();
  const gateway = `http://localhost:${gatewayPort}`;
  let output = '';
  const child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', 'services/all-in-one/src/main.ts'],
    {
      env: {
        PATH: process.env.PATH,
        PORT: String(gatewayPort),
        DEMO_PLATFORM_PORT: String(demoPort),
        GATEWAY_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const secrets = async () =>
    JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
  const adminToken = async (scope = ALL_ADMIN_SCOPES) => {
    const { DEV_IDENTITY_ADMIN_CLIENT_SECRET: secret } = await secrets();
    const response = await fetch(`${gateway}/api/auth/env/PROD/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`gateway-admin:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        scope,
        resource: 'http://localhost:8080',
      }),
    });
    if (response.status !== 200) throw new Error(`admin token: ${response.status}`);
    return ((await response.json()) as { access_token: string }).access_token;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  await waitFor(async () => output.includes('Ctrl-C stops everything'), {
    timeoutMs: 90_000,
    intervalMs: 200,
    what: 'the embedded process to print its banner',
  }).catch(async (error: unknown) => {
    await stop();
    throw new Error(`${String(error)}\n${output}`);
  });
  return {
    gateway,
    demo: `http://localhost:${demoPort}`,
    dataDir,
    child,
    output: () => output,
    secrets,
    adminToken,
    async admin(method, path, body) {
      return fetch(`${gateway}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${await adminToken()}`,
          'content-type': 'application/json',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    },
    stop,
  };
}
