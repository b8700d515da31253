import { readFileSync, unlinkSync } from 'node:fs';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/** The file in the data folder that names the process using it. */
export const DATA_DIR_LOCK_FILE = 'gateway.lock';

/** Another live process uses the data folder; the message names the folder and its pid. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data folder ${dataDir} is in use by another gateway process (pid ${pid}). ` +
        'Stop that process, or choose another folder with GATEWAY_DATA_DIR. If no such ' +
        `process is running, delete ${join(dataDir, DATA_DIR_LOCK_FILE)}.`,
    );
  }
}

export type DataDirLock = {
  /** The absolute folder. */
  dataDir: string;
  /** Removes the lock file if it still names this process. */
  release(): Promise<void>;
};

type Holder = { pid: number; hostname: string };

/**
 * Makes `dataDir` this process's own before anything in it is read or written: creates the
 * folder (mode 0700) and `gateway.lock` naming this process. A folder locked by a live
 * process fails with DataDirLockedError, touching nothing else; a lock whose process is gone
 * (a crash, SIGKILL) is taken over. The lock is released by `release` and at process exit.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const folder = resolve(dataDir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await chmod(folder, 0o700);
  const lockFile = join(folder, DATA_DIR_LOCK_FILE);
  const me: Holder = { pid: process.pid, hostname: hostname() };
  for (let attempt = 0; ; attempt += 1) {
    if (await createExclusively(lockFile, `${JSON.stringify(me)}\n`)) break;
    const holder = await readHolder(lockFile);
    if (holder === undefined) continue; // removed meanwhile: try again
    if (isAlive(holder) || attempt >= 3) throw new DataDirLockedError(folder, holder.pid);
    await unlink(lockFile).catch(ignoreMissing);
  }
  const releaseAtExit = () => releaseSync(lockFile);
  process.once('exit', releaseAtExit);
  return {
    dataDir: folder,
    release: async () => {
      process.off('exit', releaseAtExit);
      if ((await readHolder(lockFile))?.pid === process.pid) {
        await unlink(lockFile).catch(ignoreMissing);
      }
    },
  };
}

/** Writes a private temporary file and links it into place: the lock appears whole or not at all. */
async function createExclusively(file: string, content: string): Promise<boolean> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(ignoreMissing);
  }
}

async function readHolder(file: string): Promise<Holder | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseHolder(text);
}

function parseHolder(text: string): Holder {
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (Number.isInteger(parsed.pid) && typeof parsed.hostname === 'string') {
      return { pid: parsed.pid ?? 0, hostname: parsed.hostname };
    }
  } catch {
    // Not ours to read: counted as held by no live process below.
  }
  return { pid: 0, hostname: hostname() };
}

/** A process on another host (a shared volume) cannot be checked and counts as alive. */
function isAlive(holder: Holder): boolean {
  if (holder.hostname !== hostname()) return true;
  if (holder.pid <= 0) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseSync(lockFile: string): void {
  try {
    if (parseHolder(readFileSync(lockFile, 'utf8')).pid === process.pid) unlinkSync(lockFile);
  } catch {
    // Already gone, or the folder was removed: nothing to release.
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
