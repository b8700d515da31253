import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AllocationProfileMessage } from './allocation-sampling.js';

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
 * Starts a TypeScript entry point the way the repository's own scripts do (node + tsx with
 * the `@gateway/source` condition), output to a log file (no pipe the bench would have to
 * drain while it measures), with an IPC channel for the bench targets' ready message.
 */
export function startTsxProcess(options: {
  name: string;
  entry: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
  nodeArgs?: string[];
  /** Modules loaded before the entry point, after tsx (so they may be TypeScript). */
  imports?: string[];
}): BenchProcess {
  const logFile = join(options.logDir, `${options.name}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      '--conditions=@gateway/source',
      '--import',
      'tsx',
      ...(options.imports ?? []).flatMap((module) => ['--import', module]),
      options.entry,
      ...(options.args ?? []),
    ],
    { cwd: repoRoot, env: options.env, stdio: ['ignore', fd, fd, 'ipc'] },
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

/** CPU time a process has used so far, in milliseconds: in user space and in the kernel. */
export async function cpuSplitMs(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces: the fields after it start past ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    user: (Number(fields[11]) * 1000) / TICKS_PER_SECOND,
    system: (Number(fields[12]) * 1000) / TICKS_PER_SECOND,
  };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export async function cpuMs(pid: number): Promise<number> {
  const { user, system } = await cpuSplitMs(pid);
  return user + system;
}

/** The machine's CPU time so far, from /proc/stat's first line, in clock ticks. */
export type MachineTicks = { busy: number; steal: number; total: number };

export async function machineTicks(): Promise<MachineTicks> {
  const stat = await readFile('/proc/stat', 'utf8');
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is
  // already counted in user and nice).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = stat
    .slice(0, stat.indexOf('\n'))
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number) as [number, number, number, number, number, number, number, number];
  const busy = user + nice + system + irq + softirq;
  return { busy, steal, total: busy + idle + iowait + steal };
}

/**
 * How busy the whole machine was between two readings, in % of all its cores: every process
 * (the gateway, the load generator, Redis, PostgreSQL and anything else), and the time the
 * hypervisor gave the cores to other guests (steal), which no process is charged for.
 */
export function machineShare(before: MachineTicks, after: MachineTicks) {
  const total = Math.max(after.total - before.total, 1);
  return {
    machineBusyPct: Math.round(((after.busy - before.busy) / total) * 1000) / 10,
    machineStealPct: Math.round(((after.steal - before.steal) / total) * 1000) / 10,
  };
}

/** Resident set size of a process in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** Sums cpuSplitMs over processes (split mode: the four services). */
export async function totalCpuSplitMs(pids: number[]): Promise<{ user: number; system: number }> {
  const each = await Promise.all(pids.map((pid) => cpuSplitMs(pid)));
  return {
    user: each.reduce((sum, cpu) => sum + cpu.user, 0),
    system: each.reduce((sum, cpu) => sum + cpu.system, 0),
  };
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

/**
 * Sends one command to allocation-sampling.ts in `target` and waits for its `answer` (`started`
 * or `written`); rejects on its failure or after 30 s.
 */
export function allocationCommand(
  target: BenchProcess,
  command: AllocationProfileMessage,
  answer: 'started' | 'written',
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`${target.name}: no allocation profile answer`)),
      30_000,
    );
    const onMessage = (message: unknown) => {
      const { allocationProfile, error } = (message ?? {}) as {
        allocationProfile?: string;
        error?: string;
      };
      if (allocationProfile === answer) finish();
      else if (allocationProfile === 'failed') finish(new Error(`${target.name}: ${error}`));
    };
    const finish = (error?: Error) => {
      clearTimeout(timer);
      target.child.off('message', onMessage);
      if (error === undefined) resolve();
      else reject(error);
    };
    target.child.on('message', onMessage);
    target.child.send(command);
  });
}
