import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The CPUs this process may run on (`Cpus_allowed_list` of /proc/self/status), lowest first.
 */
export async function allowedCpus(): Promise<number[]> {
  const status = await readFile('/proc/self/status', 'utf8');
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? '';
  return parseCpuList(list);
}

/** `0-2,4` → [0, 1, 2, 4]. */
export function parseCpuList(list: string): number[] {
  const cpus = list
    .split(',')
    .filter((part) => part !== '')
    .flatMap((part) => {
      const [from, to = from] = part.split('-').map(Number);
      if (from === undefined || to === undefined || !(from <= to)) return [];
      return Array.from({ length: to - from + 1 }, (_, index) => from + index);
    });
  return [...new Set(cpus)].sort((a, b) => a - b);
}

/** Binds every thread of `pid` (`taskset --all-tasks`) to `cpus`; threads started later follow. */
export async function pinProcess(pid: number, cpus: readonly number[]): Promise<void> {
  try {
    await run('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus.join(','), String(pid)]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`taskset (util-linux) could not pin process ${pid}: ${reason}`);
  }
}

export type Pinning = {
  /** The gateway's one CPU. */
  gatewayCpu: number;
  /** Everything else the bench runs: the load generator (the bench process) and its targets. */
  otherCpu: number;
  /** Every pinned process back on all the CPUs it had. */
  release(): Promise<void>;
};

/**
 * The gateway on one CPU, the bench process (the load generator) and `others` on another, so
 * the generator never takes CPU from the gateway as the offered load grows. PostgreSQL and
 * Redis are not the bench's processes and stay where the system puts them.
 */
export async function pinApart(gatewayPid: number, others: readonly number[]): Promise<Pinning> {
  const cpus = await allowedCpus();
  const [otherCpu, gatewayCpu] = cpus;
  if (otherCpu === undefined || gatewayCpu === undefined) {
    throw new Error(
      `S5 runs the gateway and the load generator on a CPU each: only ${cpus.length} allowed`,
    );
  }
  const pinned: number[] = [];
  const release = async () => {
    for (const pid of pinned) await pinProcess(pid, cpus).catch(() => undefined);
  };
  try {
    await pinProcess(gatewayPid, [gatewayCpu]);
    pinned.push(gatewayPid);
    for (const pid of [process.pid, ...others]) {
      await pinProcess(pid, [otherCpu]);
      pinned.push(pid);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return { gatewayCpu, otherCpu, release };
}
