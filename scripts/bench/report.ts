import { cpus, loadavg, release, totalmem } from 'node:os';

/** One measured scenario at one connection count (the row of latest.json's `results`). */
export type ResultRow = {
  name: string;
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** rps / rps of baseline-express-redis-get (c) at the same connection count. */
  ratioToBaseline?: number;
  requests: number;
  durationSeconds: number;
  statusCounts: Record<string, number>;
  /** CPU of the measured server process(es) during the run, % of one core. */
  serverCpuPct?: number;
  /** CPU of the bench process (the load generator) during the run, % of one core. */
  loadGeneratorCpuPct?: number;
  /** The whole machine during the run, % of all its cores: busy, and stolen by the host. */
  machineBusyPct?: number;
  machineStealPct?: number;
  [extra: string]: unknown;
};

export type TargetCheck = {
  target: string;
  value: string;
  holds: boolean | null;
};

export type Machine = {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
  postgres?: string;
  redis?: string;
};

export function describeMachine(): Machine {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    loadAverageAtStart: loadavg().map(round2),
  };
}

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

const BASELINE = 'baseline-express-redis-get';

/** The p-th percentile (nearest rank) of unsorted values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Fills `ratioToBaseline` of each row from the baseline (c) row with the same connections. */
export function addRatios(rows: ResultRow[]): void {
  for (const row of rows) {
    const baseline = rows.find((r) => r.name === BASELINE && r.connections === row.connections);
    if (baseline !== undefined && baseline.rps > 0)
      row.ratioToBaseline = round2(row.rps / baseline.rps);
  }
}

/** The figures as one fixed-width table. */
export function formatTable(rows: ResultRow[]): string {
  const header = [
    'scenario',
    'conns',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'vs (c)',
    'CPU ms/req',
    'notes',
  ];
  const lines = rows.map((row) => [
    row.name,
    String(row.connections),
    row.rps.toFixed(0),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    String(row.errors),
    row.ratioToBaseline === undefined ? '-' : row.ratioToBaseline.toFixed(2),
    typeof row.serverCpuMsPerRequest === 'number' ? row.serverCpuMsPerRequest.toFixed(2) : '-',
    rowNotes(row).join('; '),
  ]);
  const widths = header.map((title, index) =>
    Math.max(title.length, ...lines.map((line) => (line[index] ?? '').length)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, index) =>
        index === 0 || index === cells.length - 1
          ? cell.padEnd(widths[index] ?? 0)
          : cell.padStart(widths[index] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [
    format(header),
    format(widths.map((width) => '-'.repeat(width))),
    ...lines.map(format),
  ].join('\n');
}

/**
 * What a row says beside its figures, in the order read: answers, what a sign-in cost, load
 * offered, memory, then who used the CPU. The console table and docs/benchmarks.md
 * (to-markdown.ts) both print this list.
 */
export function rowNotes(row: ResultRow): string[] {
  const notes: string[] = [];
  const statuses = Object.entries(row.statusCounts)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
  if (statuses !== '') notes.push(statuses);
  if (typeof row.offeredRps === 'number') {
    const share = typeof row.offeredPct === 'number' ? ` (${row.offeredPct}%)` : '';
    notes.push(`offered ${row.offeredRps.toFixed(0)}/s${share} open-loop`);
  }
  if (typeof row.p99FromScheduleMs === 'number') {
    notes.push(`p99 from the schedule ${row.p99FromScheduleMs.toFixed(1)} ms`);
  }
  // S5's clients: how many requests at most waited for one of their connections, and the
  // generator's own longest stall (open-loop.ts), which delays requests as much as the server.
  if (typeof row.backlogMax === 'number' && row.backlogMax > 0) {
    notes.push(`up to ${row.backlogMax} waiting for a connection`);
  }
  if (typeof row.generatorStallMaxMs === 'number') {
    notes.push(`generator stalled up to ${row.generatorStallMaxMs.toFixed(0)} ms`);
  }
  if (typeof row.rssGrowthPct === 'number') {
    const sign = row.rssGrowthPct >= 0 ? '+' : '−';
    notes.push(`RSS ${sign}${Math.abs(row.rssGrowthPct).toFixed(1)}%`);
  }
  if (typeof row.gatewaySystemCpuMsPerSignIn === 'number') {
    notes.push(`${row.gatewaySystemCpuMsPerSignIn.toFixed(2)} ms of the gateway's in the kernel`);
  }
  if (typeof row.identityCpuMsPerSignIn === 'number') {
    notes.push(`identity service ${row.identityCpuMsPerSignIn.toFixed(1)} ms CPU/sign-in`);
  }
  const pg = row.pgTransactionsPerRequest;
  if (typeof pg === 'number') notes.push(`~${pg.toFixed(1)} PostgreSQL transactions/req`);
  if (typeof row.freshCodes === 'number') {
    notes.push(`${row.freshCodes} fresh codes, ${row.durationSeconds.toFixed(1)} s`);
  }
  if (typeof row.serverCpuPct === 'number') {
    notes.push(`server ${row.serverCpuPct.toFixed(0)}% CPU`);
  }
  if (typeof row.loadGeneratorCpuPct === 'number') {
    notes.push(`load generator ${row.loadGeneratorCpuPct.toFixed(0)}% CPU`);
  }
  if (typeof row.machineBusyPct === 'number') {
    const steal = row.machineStealPct ?? 0;
    notes.push(
      `machine ${row.machineBusyPct.toFixed(0)}% busy${steal > 0 ? `, ${steal.toFixed(1)}% stolen` : ''}`,
    );
  }
  return notes;
}

export function formatTargets(targets: TargetCheck[]): string {
  return targets
    .map(
      (check) =>
        `${check.holds === null ? '  ?  ' : check.holds ? ' ok  ' : ' NOT '} ${check.target}: ${check.value}`,
    )
    .join('\n');
}
