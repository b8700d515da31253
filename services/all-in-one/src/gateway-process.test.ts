import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { variablesRequiredBy } from '@gateway/config';
import { createTestDatabase, unusedLocalPort, waitFor } from '@gateway/testkit';

// The processes behind `start` and `start:gateway`, started as a user starts them.
const spawned: ChildProcess[] = [];
afterEach(() => {
  for (const child of spawned.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

/** A port something else listens on, like a second copy of the gateway. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

const validGatewayEnv = {
  IDENTITY_ISSUER: 'https://id.example.com',
  GATEWAY_ENCRYPTION_KEYS: `k1:${'A'.repeat(43)}`,
};

function startProcess(
  entry: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', entry],
    {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  spawned.push(child);
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

const exitCode = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('start (the embedded default)', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-embedded-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reports only PORT when PORT is bad, not the origins derived from it', async () => {
    const run = startProcess('services/all-in-one/src/main.ts', {
      PORT: 'abc',
      GATEWAY_DATA_DIR: join(dataDir, 'bad-port'),
    });
    expect(await exitCode(run.child)).toBe(1);
    expect(run.output()).toBe(
      'Configuration error:\n  - PORT: must be an integer from 1 to 65535\n',
    );
  });

  it('stops at once when PORT and DEMO_PLATFORM_PORT are the same port', async () => {
    const port = await unusedLocalPort();
    const folder = join(dataDir, 'same-port');
    const run = startProcess('services/all-in-one/src/main.ts', {
      PORT: String(port),
      DEMO_PLATFORM_PORT: String(port),
      GATEWAY_DATA_DIR: folder,
    });
    expect(await exitCode(run.child)).toBe(1);
    expect(run.output()).toBe(
      `PORT and DEMO_PLATFORM_PORT are both ${port}; choose different ports.\n`,
    );
    expect(existsSync(folder)).toBe(false);
  });

  it('stops at once with a message naming PORT when it is taken, before creating anything', async () => {
    const { port, server } = await takenPort();
    try {
      const folder = join(dataDir, 'never-created');
      const run = startProcess('services/all-in-one/src/main.ts', {
        PORT: String(port),
        DEMO_PLATFORM_PORT: String(await unusedLocalPort()),
        GATEWAY_DATA_DIR: folder,
      });
      expect(await exitCode(run.child)).toBe(1);
      expect(run.output()).toBe(
        `The gateway cannot listen on port ${port} (already in use). ` +
          'Stop what uses it or choose another port with PORT.\n',
      );
      expect(existsSync(folder)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('start:gateway (configured by environment only)', () => {
  let folders: string;
  beforeAll(async () => {
    folders = await mkdtemp(join(tmpdir(), 'gateway-process-'));
  });
  afterAll(async () => {
    await rm(folders, { recursive: true, force: true });
  });

  it('stops at start, naming the variable, when a required value is missing', async () => {
    const run = startProcess('services/all-in-one/src/gateway-main.ts', {
      IDENTITY_ISSUER: 'https://id.example.com',
    });
    expect(await exitCode(run.child)).toBe(1);
    expect(run.output()).toContain('GATEWAY_ENCRYPTION_KEYS');
  });

  it('with no environment, names every variable the configuration table requires for it in one message', async () => {
    const run = startProcess('services/all-in-one/src/gateway-main.ts', {});
    expect(await exitCode(run.child)).toBe(1);
    const lines = run.output().trimEnd().split('\n');
    expect(lines[0]).toBe('Configuration error:');
    expect(lines.slice(1).map((line) => /^ {2}- ([A-Z_]+): /.exec(line)?.[1])).toEqual(
      variablesRequiredBy('start:gateway'),
    );
  });

  it('stops at once with a message naming PORT when it is taken, before creating the data folder', async () => {
    const { port, server } = await takenPort();
    try {
      const folder = join(folders, 'never-created');
      const run = startProcess('services/all-in-one/src/gateway-main.ts', {
        ...validGatewayEnv,
        PORT: String(port),
        GATEWAY_DATA_DIR: folder,
      });
      expect(await exitCode(run.child)).toBe(1);
      expect(run.output()).toBe(
        `The gateway cannot listen on port ${port} (already in use). ` +
          'Stop what uses it or choose another port with PORT.\n',
      );
      expect(existsSync(folder)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a data folder another live process holds, naming the folder and its pid, and leaves it alone', async () => {
    const folder = join(folders, 'held');
    await mkdir(folder);
    // This test process is alive: it holds the folder.
    const lock = JSON.stringify({ pid: process.pid, hostname: hostname() });
    await writeFile(join(folder, 'gateway.lock'), lock);
    const run = startProcess('services/all-in-one/src/gateway-main.ts', {
      ...validGatewayEnv,
      PORT: String(await unusedLocalPort()),
      GATEWAY_DATA_DIR: folder,
    });
    expect(await exitCode(run.child)).toBe(1);
    expect(run.output()).toContain(
      `The data folder ${folder} is in use by another gateway process (pid ${process.pid}).`,
    );
    expect(run.output()).not.toMatch(/\bat .*\.ts:\d+/);
    expect(await readdir(folder)).toEqual(['gateway.lock']);
    expect(await readFile(join(folder, 'gateway.lock'), 'utf8')).toBe(lock);
  });

  it('tells a second copy on a held data folder about the process that holds it, even when its port is taken too', async () => {
    const folder = join(folders, 'held-and-port-taken');
    await mkdir(folder);
    const lock = JSON.stringify({ pid: process.pid, hostname: hostname() });
    await writeFile(join(folder, 'gateway.lock'), lock);
    const { port, server } = await takenPort();
    try {
      const run = startProcess('services/all-in-one/src/gateway-main.ts', {
        ...validGatewayEnv,
        PORT: String(port),
        GATEWAY_DATA_DIR: folder,
      });
      expect(await exitCode(run.child)).toBe(1);
      expect(run.output()).toContain(
        `The data folder ${folder} is in use by another gateway process (pid ${process.pid}).`,
      );
      expect(run.output()).not.toContain('cannot listen');
      expect(await readFile(join(folder, 'gateway.lock'), 'utf8')).toBe(lock);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('stops at start, naming each bad variable and never echoing a secret', async () => {
    const run = startProcess('services/all-in-one/src/gateway-main.ts', {
      IDENTITY_ISSUER: 'http://id.example.com',
      AUTH_HANDOFF_TTL_SECONDS: '600',
      IDENTITY_SERVICE_KEY: 'too-short-secret',
    });
    expect(await exitCode(run.child)).toBe(1);
    const output = run.output();
    expect(output).toContain('IDENTITY_ISSUER');
    expect(output).toContain('AUTH_HANDOFF_TTL_SECONDS');
    expect(output).toContain('IDENTITY_SERVICE_KEY');
    expect(output).not.toContain('too-short-secret');
    expect(output).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
  });

  it('starts with an identity issuer that does not answer, warns naming it and the error, and readiness reports it without changing its status', async () => {
    const database = await createTestDatabase();
    const port = await unusedLocalPort();
    // Nothing listens there. (Port 9 of the issue report is one fetch refuses to ask at all.)
    const issuer = `http://localhost:${await unusedLocalPort()}/x`;
    try {
      const run = startProcess('services/all-in-one/src/gateway-main.ts', {
        ...validGatewayEnv,
        IDENTITY_ISSUER: issuer,
        DATABASE_URL: database.url,
        PORT: String(port),
        GATEWAY_DATA_DIR: join(folders, 'issuer-down'),
      });
      await waitFor(
        async () => run.output().includes('does not answer') || run.child.exitCode !== null,
        {
          timeoutMs: 90_000,
          intervalMs: 200,
          what: 'the warning about the identity issuer',
        },
      );
      expect(run.child.exitCode).toBeNull();
      const warning =
        run
          .output()
          .split('\n')
          .find((line) => line.includes('does not answer')) ?? '';
      const logged = JSON.parse(warning) as Record<string, unknown>;
      expect(logged).toMatchObject({
        level: 'warn',
        environmentKey: 'PROD',
        issuer,
      });
      expect(logged.msg).toContain(
        `The identity issuer of environment PROD (IDENTITY_ISSUER ${issuer}) does not answer: `,
      );
      expect(logged.msg).toMatch(/ECONNREFUSED/);
      expect(logged.msg).toContain('/health/ready');

      const ready = await fetch(`http://localhost:${port}/health/ready`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        status: 'ready',
        checks: { registry: 'up', authFlow: 'up', onboarding: 'up' },
        details: {
          identityIssuer: {
            environmentKey: 'PROD',
            issuer,
            status: 'unreachable',
            error: "The identity provider's discovery document is unreachable (ECONNREFUSED).",
          },
        },
      });
      // A public endpoint: the reason, never the address the issuer resolved to.
      expect(JSON.stringify(body)).not.toContain('127.0.0.1');
      run.child.kill('SIGTERM');
      expect(await exitCode(run.child)).toBe(0);
    } finally {
      await database.drop();
    }
  });
});
