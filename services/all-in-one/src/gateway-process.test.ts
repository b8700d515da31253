import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unusedLocalPort, waitFor } from '@gateway/testkit';

// The processes behind `pnpm start` and `pnpm start:gateway`, started as a user starts them.
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
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

const exitCode = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

async function waitUntilReady(port: number, output: () => string): Promise<void> {
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined))?.status === 200,
    { timeoutMs: 90_000, intervalMs: 250, what: 'the gateway to answer ready' },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${output()}`);
  });
}

describe('pnpm start (the embedded default)', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-embedded-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts with no configuration, keeps its data folder and keys across restarts, and stops on SIGTERM', async () => {
    const port = await unusedLocalPort();
    const env = {
      PORT: String(port),
      DEMO_PLATFORM_PORT: String(await unusedLocalPort()),
      GATEWAY_DATA_DIR: dataDir,
    };

    const first = startProcess('services/all-in-one/src/main.ts', env);
    await waitUntilReady(port, first.output);
    // The start banner comes once the first run's demo platform listens too.
    await waitFor(async () => first.output().includes(`http://localhost:${port}/docs`), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'the start banner',
    });
    const secretsFile = join(dataDir, 'secrets.json');
    expect((await stat(secretsFile)).mode & 0o777).toBe(0o600);
    const keys = await readFile(secretsFile, 'utf8');
    first.child.kill('SIGTERM');
    expect(await exitCode(first.child)).toBe(0);

    const second = startProcess('services/all-in-one/src/main.ts', env);
    await waitUntilReady(port, second.output);
    expect(await readFile(secretsFile, 'utf8')).toBe(keys);
    second.child.kill('SIGINT');
    expect(await exitCode(second.child)).toBe(0);
  }, 180_000);
});

describe('pnpm start:gateway (configured by environment only)', () => {
  it('stops at start, naming the variable, when a required value is missing', async () => {
    const run = startProcess('services/all-in-one/src/gateway-main.ts', {
      IDENTITY_ISSUER: 'https://id.example.com',
    });
    expect(await exitCode(run.child)).toBe(1);
    expect(run.output()).toContain('GATEWAY_ENCRYPTION_KEYS');
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
});
