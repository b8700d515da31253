import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the bench runs every process from there). */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export type BenchProcess = {
  name: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  /** The first IPC message of a bench target (sent once it listens). */
  ready: Promise<unknown>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process is gone. */
  stop(): Promise<void>;
};

/**
 * The compiled JavaScript of a service's TypeScript entry point (`<package>/src/x.ts` →
 * `<package>/dist/x.js`, as `tsc --build` writes it and the container images run it).
 */
export function compiledEntry(entry: string): string {
  const match = /^(.*)\/src\/(.*)\.ts$/.exec(entry);
  if (match === null) throw new Error(`${entry} is not a package's src/ entry point`);
  return `${match[1]}/dist/${match[2]}.js`;
}

/**
 * Starts a TypeScript entry point, output to a log file (no pipe the bench would have to drain
 * while it measures), with an IPC channel for the bench targets' ready message. The gateway's
 * own processes run `compiled`: the `tsc --build` output on plain node, as the container images
 * run them. The bench's targets and tools run the way the repository's scripts do (node + tsx
 * with the `@gateway/source` condition).
 */
export function startTsxProcess(options: {
  name: string;
  entry: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
  nodeArgs?: string[];
  /** Where it runs and resolves tsx and its packages from (default: the repository root). */
  cwd?: string;
  compiled?: boolean;
}): BenchProcess {
  const logFile = join(options.logDir, `${options.name}.log`);
  const fd = openSync(logFile, 'w');
  const entryArgs =
    options.compiled === true
      ? [compiledEntry(options.entry)]
      : ['--conditions=@gateway/source', '--import', 'tsx', options.entry];
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), ...entryArgs, ...(options.args ?? [])],
    { cwd: options.cwd ?? repoRoot, env: options.env, stdio: ['ignore', fd, fd, 'ipc'] },
  );
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`${options.name} did not start`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<unknown>((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `${options.name} exited (${code ?? signal}) before it was ready:\n${logTail(logFile)}`,
        ),
      ),
    );
  });
  ready.catch(() => undefined); // a caller that never awaits it must not crash the bench
  return {
    name: options.name,
    pid: child.pid,
    child,
    logFile,
    ready,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function logTail(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

// Linux /proc: utime + stime of a process in clock ticks (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) processes have used so far, in milliseconds. */
export async function cpuMs(...pids: number[]): Promise<number> {
  const each = await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      // The command name (field 2) may contain spaces: the fields after it start past ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    }),
  );
  return each.reduce((sum, ms) => sum + ms, 0);
}

/** Resident set size of a process in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match === null ? 0 : Number(match[1]) * 1024;
}

/**
 * Samples the RSS of a process every `intervalMs` until stopped; answers the highest sample
 * and the median. The highest depends on when V8 last collected (a sample taken just before
 * a collection reads high); the median of a run's samples is its steady level.
 */
export function sampleRss(
  pid: number,
  intervalMs = 250,
): { stop(): Promise<{ maxBytes: number; medianBytes: number }> } {
  const samples: number[] = [];
  const sample = () =>
    rssBytes(pid)
      .then((value) => {
        samples.push(value);
      })
      .catch(() => undefined);
  void sample();
  const timer = setInterval(() => void sample(), intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await sample();
      const sorted = [...samples].sort((a, b) => a - b);
      return {
        maxBytes: sorted.at(-1) ?? 0,
        medianBytes: sorted[Math.floor(sorted.length / 2)] ?? 0,
      };
    },
  };
}

export type Usage = {
  /** The server processes' CPU over the run, in milliseconds. */
  serverCpuMs: number;
  serverCpuPct: number;
  serverCpuMsPerRequest: number;
  loadGeneratorCpuPct: number;
};

/** CPU of the server processes and of the bench itself (the load generator) over one run. */
export async function usageOver(
  pids: number[],
): Promise<{ done(run: { durationSeconds: number; requests: number }): Promise<Usage> }> {
  const serverBefore = await cpuMs(...pids);
  const benchBefore = process.cpuUsage();
  return {
    done: async (run) => {
      const server = (await cpuMs(...pids)) - serverBefore;
      const bench = process.cpuUsage(benchBefore);
      const wallMs = Math.max(run.durationSeconds, 0.001) * 1000;
      const share = (ms: number) => Math.round((ms / wallMs) * 10_000) / 100;
      return {
        serverCpuMs: server,
        serverCpuPct: share(server),
        serverCpuMsPerRequest: Math.round((server / Math.max(run.requests, 1)) * 100) / 100,
        loadGeneratorCpuPct: share((bench.user + bench.system) / 1000),
      };
    },
  };
}

/** Each process's share of one run, by name: CPU per request and the median of its RSS. */
export type ByProcess = {
  cpuMsPerRequestByProcess: Record<string, number>;
  rssMedianBytesByProcess: Record<string, number>;
};

/**
 * CPU per request and RSS of each of `processes` over one run (the split deployment's four
 * processes: where an operation's CPU goes, and what each process holds).
 */
export async function figuresByProcess(
  processes: readonly BenchProcess[],
): Promise<{ done(requests: number): Promise<ByProcess> }> {
  const rss = processes.map((each) => sampleRss(each.pid));
  const before = await Promise.all(processes.map((each) => cpuMs(each.pid)));
  return {
    done: async (requests) => {
      const after = await Promise.all(processes.map((each) => cpuMs(each.pid)));
      const medians = await Promise.all(rss.map(async (each) => (await each.stop()).medianBytes));
      const cpuMsPerRequestByProcess: Record<string, number> = {};
      const rssMedianBytesByProcess: Record<string, number> = {};
      processes.forEach((each, index) => {
        const used = (after[index] ?? 0) - (before[index] ?? 0);
        cpuMsPerRequestByProcess[each.name] =
          Math.round((used / Math.max(requests, 1)) * 1000) / 1000;
        rssMedianBytesByProcess[each.name] = medians[index] ?? 0;
      });
      return { cpuMsPerRequestByProcess, rssMedianBytesByProcess };
    },
  };
}
