import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testkit';
import { DATA_DIR_LOCK_FILE, DataDirLockedError, lockDataDir } from './data-dir-lock.js';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const lockModule = pathToFileURL(fileURLToPath(new URL('./data-dir-lock.ts', import.meta.url)));

let root: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gateway-lock-'));
});
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Another process that locks `dataDir`, says `locked` and exits when its stdin closes. */
function lockInAnotherProcess(dataDir: string) {
  const script = [
    `import { lockDataDir } from ${JSON.stringify(lockModule.href)};`,
    `await lockDataDir(${JSON.stringify(dataDir)});`,
    "process.stdout.write('locked\\n');",
    "process.stdin.on('end', () => process.exit(0)).resume();",
  ].join('\n');
  let output = '';
  const child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: repositoryRoot, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.push(child);
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, exited, output: () => output };
}

const lockedError = async (dataDir: string): Promise<DataDirLockedError> => {
  const error: unknown = await lockDataDir(dataDir).then(
    async (lock) => {
      await lock.release();
      throw new Error('expected the folder to be locked');
    },
    (rejection: unknown) => rejection,
  );
  if (!(error instanceof DataDirLockedError)) throw error;
  return error;
};

describe('lockDataDir', () => {
  it('creates the folder owner-only with a lock naming this process, and release removes it', async () => {
    const dataDir = join(root, 'new', 'folder');
    const lock = await lockDataDir(dataDir);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const holder = JSON.parse(await readFile(join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as {
      pid: number;
    };
    expect(holder.pid).toBe(process.pid);
    await lock.release();
    expect(existsSync(join(dataDir, DATA_DIR_LOCK_FILE))).toBe(false);
  });

  it('refuses a folder that another live process holds, naming the folder and its pid, until it exits', async () => {
    const dataDir = join(root, 'shared');
    const other = lockInAnotherProcess(dataDir);
    await waitFor(async () => other.output().includes('locked'), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the other process to lock the folder',
    });
    const error = await lockedError(dataDir);
    expect(error.pid).toBe(other.child.pid);
    expect(error.message).toContain(dataDir);
    expect(error.message).toContain(`pid ${other.child.pid}`);
    expect(error.message).toContain('GATEWAY_DATA_DIR');

    other.child.stdin?.end();
    expect(await other.exited).toBe(0);
    expect(existsSync(join(dataDir, DATA_DIR_LOCK_FILE))).toBe(false);
    const lock = await lockDataDir(dataDir);
    await lock.release();
  });

  it('refuses a second lock in the same process', async () => {
    const dataDir = join(root, 'twice');
    const lock = await lockDataDir(dataDir);
    try {
      expect((await lockedError(dataDir)).pid).toBe(process.pid);
    } finally {
      await lock.release();
    }
  });

  it('takes over a lock whose process is gone', async () => {
    const dataDir = join(root, 'stale');
    const gone = spawnSync(process.execPath, ['-e', '']).pid ?? 0;
    await lockDataDir(dataDir).then((lock) => lock.release());
    await writeFile(
      join(dataDir, DATA_DIR_LOCK_FILE),
      JSON.stringify({ pid: gone, hostname: hostname() }),
    );
    const lock = await lockDataDir(dataDir);
    const holder = JSON.parse(await readFile(join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as {
      pid: number;
    };
    expect(holder.pid).toBe(process.pid);
    await lock.release();
  });

  it('takes over a lock left by a process that was killed outright', async () => {
    const dataDir = join(root, 'killed');
    const other = lockInAnotherProcess(dataDir);
    await waitFor(async () => other.output().includes('locked'), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'the other process to lock the folder',
    });
    other.child.kill('SIGKILL');
    await other.exited;
    expect(existsSync(join(dataDir, DATA_DIR_LOCK_FILE))).toBe(true);
    const lock = await lockDataDir(dataDir);
    await lock.release();
  });
});
