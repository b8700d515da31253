import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './processes.js';

const run = promisify(execFile);

/** The commit S4 compares the gateway's CPU per sign-in with, unless told otherwise. */
export const DEFAULT_BASELINE_REF = '3c5bade';

/** The pnpm the repository pins (package.json's packageManager). */
const PNPM = 'pnpm@10.34.9';

/** Another build of the gateway, checked out and installed, whose S4 is measured too. */
export type BaselineBuild = {
  /** What the caller asked for (`3c5bade`, a branch, or the folder given). */
  ref: string;
  commit: string;
  /** The checkout: the baseline gateway runs from here, with its own node_modules. */
  dir: string;
  /** Removes the checkout the bench made; keeps one it was given. */
  remove(): Promise<void>;
};

/** An installed checkout the caller keeps (`--baseline-dir`): used as it is, never removed. */
export async function existingBaselineBuild(dir: string): Promise<BaselineBuild> {
  const root = resolve(dir);
  if (!existsSync(join(root, 'node_modules'))) {
    throw new Error(`--baseline-dir ${root}: no node_modules there (install it first)`);
  }
  const commit = await git(root, ['rev-parse', 'HEAD']).catch(() => 'unknown');
  await compileCheckout(root, join(tmpdir(), `gateway-bench-baseline-compile-${process.pid}.log`));
  return { ref: root, commit, dir: root, remove: async () => undefined };
}

/**
 * The tree of `ref` in a temporary folder (`git archive`, so the repository gets no worktree
 * entry to forget on a crash), installed from the lockfile of that commit with the pnpm store's
 * packages where it has them. `log` names the file the install writes to.
 */
export async function checkOutBaselineBuild(
  ref: string,
  log: string,
  /** Gets the removal as soon as the folder exists, so an interruption midway removes it. */
  onCreated: (remove: () => Promise<void>) => void,
): Promise<BaselineBuild> {
  const commit = await git(repoRoot, ['rev-parse', '--verify', `${ref}^{commit}`]).catch(() => {
    throw new Error(`--baseline-ref ${ref}: no such commit in ${repoRoot}`);
  });
  const dir = await mkdtemp(join(tmpdir(), 'gateway-bench-baseline-'));
  const installing = new AbortController();
  const remove = async () => {
    installing.abort();
    await rm(dir, { recursive: true, force: true });
  };
  onCreated(remove);
  try {
    await pipeArchive(commit, dir);
    await spawnLogged(
      'npx',
      ['-y', PNPM, 'install', '--frozen-lockfile', '--prefer-offline', '--reporter=append-only'],
      { cwd: dir, log, signal: installing.signal },
    );
    await compileCheckout(dir, `${log}.compile`, installing.signal);
  } catch (error) {
    await remove();
    throw error;
  }
  return { ref, commit, dir, remove };
}

/**
 * `tsc --build` in a checkout: the gateway's processes run compiled in the bench, as the
 * container images run them (incremental: quick when nothing changed).
 */
export async function compileCheckout(
  dir: string,
  log: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<void> {
  const tsc = join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
  await spawnLogged(process.execPath, [tsc, '--build'], { cwd: dir, log, signal });
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd });
  return stdout.trim();
}

/** `git archive <commit> | tar -x -C <dir>`. */
function pipeArchive(commit: string, dir: string): Promise<void> {
  return new Promise((resolvePipe, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(tar.stdin);
    let failed = false;
    const fail = (what: string) => (code: number | null) => {
      if (code === 0 || failed) return;
      failed = true;
      reject(new Error(`${what} of ${commit} exited with ${code}`));
    };
    archive.once('error', reject);
    tar.once('error', reject);
    archive.once('exit', fail('git archive'));
    tar.once('exit', (code) => {
      fail('tar')(code);
      if (code === 0 && !failed) resolvePipe();
    });
  });
}

async function spawnLogged(
  command: string,
  args: string[],
  { cwd, log, signal }: { cwd: string; log: string; signal: AbortSignal },
) {
  const file = await open(log, 'w');
  try {
    await new Promise<void>((resolveRun, reject) => {
      const child = spawn(command, args, { cwd, signal, stdio: ['ignore', file.fd, file.fd] });
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0
          ? resolveRun()
          : reject(new Error(`${command} ${args.join(' ')} exited with ${code}; see ${log}`)),
      );
    });
  } finally {
    await file.close();
  }
}
