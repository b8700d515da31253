import { cpus, loadavg, release, totalmem } from 'node:os';

/** One measured scenario at one connection count (a row of the report's `results`). */
export type ResultRow = {
  name: string;
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, time-outs and answers with an unexpected status. */
  errors: number;
  requests: number;
  durationSeconds: number;
  statusCounts: Record<string, number>;
  /** rps / rps of baseline-express-redis-get at the same connection count. */
  ratioToBaseline?: number;
  /** CPU of the measured server process(es) during the run, % of one core. */
  serverCpuPct?: number;
  serverCpuMsPerRequest?: number;
  /** CPU of the bench process (the load generator) during the run, % of one core. */
  loadGeneratorCpuPct?: number;
  /**
   * Scenario-specific figures (S2's codes; S4's CPU and Redis commands per sign-in; S5's
   * offered load, the cost of a refusal r and the served-share bound).
   */
  [extra: string]: unknown;
};

export type TargetCheck = {
  target: string;
  value: string;
  /** null: the scenarios it needs were not measured in this run. */
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

export const BASELINE = 'baseline-express-redis-get';

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

/** The p-th percentile (nearest rank) of unsorted values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Fills `ratioToBaseline` of each row from the baseline row with the same connections. */
export function addRatios(rows: ResultRow[]): void {
  for (const row of rows) {
    const baseline = rows.find((r) => r.name === BASELINE && r.connections === row.connections);
    if (baseline !== undefined && baseline.rps > 0) {
      row.ratioToBaseline = round2(row.rps / baseline.rps);
    }
  }
}

/**
 * Fills each split row's `cpuRatioToAllInOne`: its CPU per operation (all four processes)
 * over that of the all-in-one row `pairs` names for it, at the same connection count, in
 * the same run (`allInOneCpuMsPerRequest`).
 */
export function addSplitRatios(
  rows: ResultRow[],
  pairs: Readonly<Partial<Record<string, string>>>,
): void {
  const perOperation = (row: ResultRow) =>
    typeof row.serverCpuMs === 'number' && row.requests > 0 ? row.serverCpuMs / row.requests : 0;
  for (const row of rows) {
    const allInOneName = pairs[row.name];
    const allInOne = rows.find(
      (each) => each.name === allInOneName && each.connections === row.connections,
    );
    if (allInOne === undefined || perOperation(allInOne) <= 0) continue;
    row.allInOneCpuMsPerRequest = Math.round(perOperation(allInOne) * 1000) / 1000;
    row.cpuRatioToAllInOne = round2(perOperation(row) / perOperation(allInOne));
  }
}

/** The figures as one Markdown table: printed by the bench and pasted into the docs. */
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
  ];
  const line = (cells: string[]) =>
    `| ${cells.map((cell) => cell.replace(/\|/g, '/')).join(' | ')} |`;
  return [
    line([...header, 'notes']),
    `|---|${header
      .slice(1)
      .map(() => '---:|')
      .join('')}---|`,
    ...rows.map((row) =>
      line([
        row.name,
        String(row.connections),
        row.rps.toFixed(0),
        row.p50Ms.toFixed(1),
        row.p99Ms.toFixed(1),
        String(row.errors),
        row.ratioToBaseline?.toFixed(2) ?? '-',
        typeof row.serverCpuMsPerRequest === 'number' ? row.serverCpuMsPerRequest.toFixed(2) : '-',
        rowNotes(row).join('; '),
      ]),
    ),
  ].join('\n');
}

/**
 * What a row says beside its figures: answers, load offered, what a sign-in cost, memory, then
 * who used the CPU. The console table and to-markdown.ts both print this list.
 */
export function rowNotes(row: ResultRow): string[] {
  const notes: string[] = [];
  const statuses = Object.entries(row.statusCounts)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
  if (statuses !== '') notes.push(statuses);
  if (typeof row.offeredRps === 'number' && typeof row.offeredPct === 'number') {
    notes.push(`offered ${row.offeredRps.toFixed(0)}/s (${row.offeredPct}%) open-loop`);
  }
  if (typeof row.servedShareOfCapacity === 'number') {
    const bound =
      typeof row.servedBound === 'number' && typeof row.refusalCostRatio === 'number'
        ? `, bound ${row.servedBound.toFixed(2)}x (r ${row.refusalCostRatio.toFixed(3)})`
        : '';
    notes.push(`200s at ${row.servedShareOfCapacity.toFixed(2)}x capacity${bound}`);
  }
  if (typeof row.p99FromScheduleMs === 'number') {
    notes.push(`p99 from the schedule ${row.p99FromScheduleMs.toFixed(1)} ms`);
  }
  if (typeof row.refusalP99Ms === 'number' && (row.statusCounts['503'] ?? 0) > 0) {
    notes.push(`refusals p99 ${row.refusalP99Ms.toFixed(1)} ms`);
  }
  if (typeof row.rssGrowthPct === 'number') {
    const sign = row.rssGrowthPct >= 0 ? '+' : '−';
    notes.push(`RSS ${sign}${Math.abs(row.rssGrowthPct).toFixed(1)}%`);
  }
  if (typeof row.baselineCommit === 'string') {
    notes.push(`build ${row.baselineCommit.slice(0, 7)}`);
  }
  if (typeof row.identityCpuMsPerSignIn === 'number') {
    notes.push(`identity provider ${row.identityCpuMsPerSignIn.toFixed(2)} ms CPU/sign-in`);
  }
  if (typeof row.redisCommandsPerSignIn === 'number') {
    const scripts =
      typeof row.redisScriptsPerSignIn === 'number'
        ? ` (${row.redisScriptsPerSignIn.toFixed(1)} scripts)`
        : '';
    notes.push(`${row.redisCommandsPerSignIn.toFixed(1)} Redis commands/sign-in${scripts}`);
  }
  if (typeof row.cpuRatioToAllInOne === 'number') {
    notes.push(
      `CPU/op ${row.cpuRatioToAllInOne.toFixed(2)}x the all-in-one's ` +
        `(${String(row.allInOneCpuMsPerRequest)} ms)`,
    );
  }
  const byProcess = (figures: unknown, format: (value: number) => string) =>
    Object.entries((figures ?? {}) as Record<string, number>)
      .map(([name, value]) => `${name.replace(/^split-/, '')} ${format(value)}`)
      .join(', ');
  if (row.cpuMsPerRequestByProcess !== undefined) {
    notes.push(`CPU ms/op: ${byProcess(row.cpuMsPerRequestByProcess, (ms) => ms.toFixed(3))}`);
  }
  if (row.rssMedianBytesByProcess !== undefined) {
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
    notes.push(`RSS: ${byProcess(row.rssMedianBytesByProcess, mb)}`);
  }
  if (typeof row.freshCodes === 'number') {
    notes.push(`${row.freshCodes} fresh codes in ${row.durationSeconds.toFixed(1)} s`);
  }
  if (typeof row.serverCpuPct === 'number')
    notes.push(`server ${row.serverCpuPct.toFixed(0)}% CPU`);
  if (typeof row.loadGeneratorCpuPct === 'number') {
    notes.push(`load generator ${row.loadGeneratorCpuPct.toFixed(0)}% CPU`);
  }
  return notes;
}

/** One line on what a refusal costs and the bounds it sets (the bench's output, to-markdown). */
export function describeRefusalCost(overload: Record<string, unknown>): string {
  const bounds = Object.entries((overload.servedBounds ?? {}) as Record<string, number>)
    .map(([pct, bound]) => `${bound.toFixed(2)}x at ${pct}`)
    .join(', ');
  return (
    `S5: a refusal costs the gateway r = ${Number(overload.refusalCostRatio).toFixed(3)} of ` +
    `an answer (${String(overload.cpuMsPerRefusal)} ms / ${String(overload.cpuMsPerAnswer)} ms ` +
    `of CPU, from the ${String(overload.refusalCostFrom)} level and the capacity run); ` +
    `served-share bounds (1 − k·r)/(1 − r): ${bounds}.`
  );
}

/** The targets as a Markdown table. */
export function formatTargets(targets: TargetCheck[]): string {
  const holds = (check: TargetCheck) =>
    check.holds === null ? 'not measured' : check.holds ? 'yes' : '**no**';
  return [
    '| target | figures | holds |',
    '|---|---|---|',
    ...targets.map((check) => `| ${check.target} | ${check.value} | ${holds(check)} |`),
  ].join('\n');
}

/** The machine line of docs/benchmarks.md's "Latest figures". */
export function formatMachine(startedAt: string, m: Machine): string {
  return (
    `Figures: run on ${startedAt.slice(0, 10)}, machine ${m.cpuModel}, ${m.cores} cores, ` +
    `${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}, PostgreSQL ${m.postgres ?? '?'}, ` +
    `Redis ${m.redis ?? '?'}; load average ${m.loadAverageAtStart.join(' / ')} at the start, ` +
    `${(m.loadAverageAtEnd ?? []).join(' / ')} at the end.`
  );
}
