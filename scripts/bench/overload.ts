import type { GatewayUnderTest } from './gateway.js';
import { runLoad, type LoadRequest } from './load.js';
import { runOpenLoop } from './open-loop.js';
import { pinApart } from './pinning.js';
import { sampleRss, usageOver } from './processes.js';
import { describeRefusalCost, round2, type ResultRow } from './report.js';
import type { BenchRun } from './run.js';

/**
 * S5's clients: a fixed pool of kept-alive connections, nearly four times the 100 requests the
 * gateway admits at once, so the pool itself does not cap the load offered at 120% (about 200
 * requests in flight: rate times latency).
 */
export const OVERLOAD_CONNECTIONS = 384;

/** The capacity S5's rates are shares of, and the gateway's CPU per answer at it. */
type Capacity = { rps: number; cpuMsPerAnswer: number };

/**
 * S5: S1's requests offered open-loop at shares of the capacity measured right before it, with
 * the gateway on one CPU and the load generator and every other process of the bench on
 * another (`others`: the pids besides the bench's own), for the capacity and every level. The
 * level below capacity is the reference of RSS growth (the same process, clients and
 * generator; only the load differs); the levels beyond it are judged against what a refusal
 * costs (`refusalCost`).
 */
export async function measureOverload(
  run: BenchRun,
  gateway: GatewayUnderTest,
  requests: LoadRequest[],
  others: number[],
): Promise<void> {
  const pinning = await pinApart(gateway.process.pid, others);
  run.step(
    `overload: the gateway on CPU ${pinning.gatewayCpu}, the load generator and the other ` +
      `processes of the bench on CPU ${pinning.otherCpu}`,
  );
  run.report.settings.overloadPinning = {
    gatewayCpu: pinning.gatewayCpu,
    loadGeneratorCpu: pinning.otherCpu,
  };
  try {
    const capacity = await measureCapacity(run, gateway, requests);
    const rows: ResultRow[] = [];
    let referenceRss: number | undefined;
    for (const factor of run.profile.overloadFactors) {
      const row = await measureLevel(run, gateway, requests, capacity, factor, referenceRss);
      if (factor < 1) referenceRss = Number(row.rssMedianBytes);
      rows.push(row);
    }
    addRefusalCost(run, capacity, rows);
  } finally {
    await pinning.release();
  }
}

async function measureLevel(
  run: BenchRun,
  gateway: GatewayUnderTest,
  requests: LoadRequest[],
  capacity: Capacity,
  factor: number,
  referenceRss: number | undefined,
): Promise<ResultRow> {
  const offeredRps = Math.max(capacity.rps * factor, run.profile.overloadLeastRps);
  const offeredPct = Math.round((offeredRps / capacity.rps) * 100);
  run.step(`overload: ${offeredRps.toFixed(0)} req/s offered (${offeredPct}%)`);
  const rss = sampleRss(gateway.process.pid);
  const usage = await usageOver([gateway.process.pid]);
  const result = await runOpenLoop({
    url: gateway.url,
    ratePerSecond: offeredRps,
    durationSeconds: run.profile.overloadSeconds,
    requests,
    connections: OVERLOAD_CONNECTIONS,
    timeoutMs: 10_000,
    expectedStatuses: [200, 503],
  });
  const { medianBytes } = await rss.stop();
  const servedRps = (result.statusCounts['200'] ?? 0) / result.durationSeconds;
  const answered = { ...result, requests: result.answered };
  return run.addRow('overload', OVERLOAD_CONNECTIONS, answered, {
    ...(await usage.done(answered)),
    p99FromScheduleMs: result.p99FromScheduleMs,
    refusalP99Ms: result.refusalP99Ms,
    refusalBodies: result.bodies,
    refusalsWithoutRetryAfter: result.withoutRetryAfter,
    socketErrors: result.socketErrors,
    timeouts: result.timeouts,
    offeredPct,
    offeredRps: round2(offeredRps),
    capacityRps: round2(capacity.rps),
    servedRps: round2(servedRps),
    servedShareOfCapacity: round2(servedRps / capacity.rps),
    offeredRequests: result.offered,
    rssMedianBytes: medianBytes,
    ...(factor < 1 || referenceRss === undefined
      ? {}
      : { rssGrowthPct: round2(((medianBytes - referenceRss) / referenceRss) * 100) }),
  });
}

/**
 * The capacity S5's rates are shares of: S1's load, closed-loop at the connections of S1's
 * best level, measured again right before S5 (not recorded as an S1 row) under S5's pinning.
 * A machine's speed swings from one minute to the next, and from a faster minute's rate the
 * level meant to be within capacity would already be beyond it. Every request is answered, so
 * the gateway's CPU over it divided by the answers is its CPU per answer at capacity.
 */
async function measureCapacity(
  run: BenchRun,
  gateway: GatewayUnderTest,
  requests: LoadRequest[],
): Promise<Capacity> {
  const s1 = run.report.results.filter((row) => row.name === 'introspect-allinone');
  const best = s1.reduce((a, b) => (b.rps > a.rps ? b : a), s1[0] ?? { connections: 100, rps: 0 });
  const usage = await usageOver([gateway.process.pid]);
  const result = await runLoad({
    url: gateway.url,
    connections: best.connections,
    durationSeconds: run.profile.measureSeconds,
    requests,
    expectedStatuses: [200],
  });
  const { serverCpuMs } = await usage.done(result);
  if (result.errors > 0 || result.rps <= 0 || serverCpuMs <= 0) {
    throw new Error(`S5's capacity measurement had ${result.errors} errors`);
  }
  const cpuMsPerAnswer = serverCpuMs / result.requests;
  run.step(
    `overload: capacity ${result.rps.toFixed(0)} req/s @${best.connections} right now, ` +
      `${cpuMsPerAnswer.toFixed(4)} ms of the gateway's CPU per answer`,
  );
  return { rps: result.rps, cpuMsPerAnswer };
}

/** What a refusal costs the gateway, from a level's totals and the CPU per answer `a`. */
export type RefusalCost = {
  /** The gateway's CPU per refusal `f` in ms: (the level's CPU − a × its 200s) / its 503s. */
  cpuMsPerRefusal: number;
  /** r = f / a. */
  ratio: number;
};

export function refusalCost(
  cpuMsPerAnswer: number,
  level: { serverCpuMs: number; answers: number; refusals: number },
): RefusalCost | undefined {
  if (!(level.refusals > 0 && cpuMsPerAnswer > 0)) return undefined;
  const cpuMsPerRefusal = (level.serverCpuMs - cpuMsPerAnswer * level.answers) / level.refusals;
  return { cpuMsPerRefusal, ratio: cpuMsPerRefusal / cpuMsPerAnswer };
}

/**
 * The share of capacity a gateway whose refusal costs r answers can still serve as 200s when
 * offered `factor` times its capacity, its CPU busy as at capacity: served × a + (offered −
 * served) × r × a = capacity × a, so served / capacity = (1 − factor × r) / (1 − r); none
 * when refusing alone takes all of it.
 */
export function servedBound(factor: number, ratio: number): number {
  return Math.max(0, (1 - factor * ratio) / (1 - ratio));
}

/**
 * r from the level offering the most (the most refusals, the gateway's CPU at its limit as at
 * capacity), and each level's bound from it, added to every S5 row beyond capacity.
 */
function addRefusalCost(run: BenchRun, capacity: Capacity, rows: ResultRow[]): void {
  const from = rows.reduce<ResultRow | undefined>(
    (a, b) => (a === undefined || Number(b.offeredPct) > Number(a.offeredPct) ? b : a),
    undefined,
  );
  const cost =
    from === undefined
      ? undefined
      : refusalCost(capacity.cpuMsPerAnswer, {
          serverCpuMs: Number(from.serverCpuMs),
          answers: from.statusCounts['200'] ?? 0,
          refusals: from.statusCounts['503'] ?? 0,
        });
  if (from === undefined || cost === undefined) {
    run.report.notes.push('S5: no level refused anything, so what a refusal costs is unknown');
    return;
  }
  for (const row of rows) {
    row.cpuMsPerAnswerAtCapacity = round4(capacity.cpuMsPerAnswer);
    if (Number(row.offeredPct) <= 100) continue;
    row.refusalCostRatio = round4(cost.ratio);
    row.servedBound = round4(servedBound(Number(row.offeredPct) / 100, cost.ratio));
  }
  from.cpuMsPerRefusal = round4(cost.cpuMsPerRefusal);
  run.report.overload = {
    capacityRps: round2(capacity.rps),
    cpuMsPerAnswer: round4(capacity.cpuMsPerAnswer),
    cpuMsPerRefusal: round4(cost.cpuMsPerRefusal),
    refusalCostRatio: round4(cost.ratio),
    refusalCostFrom: `${String(from.offeredPct)}%`,
    servedBounds: Object.fromEntries(
      [120, 200].map((pct) => [`${pct}%`, round4(servedBound(pct / 100, cost.ratio))]),
    ),
  };
  run.step(`overload: ${describeRefusalCost(run.report.overload)}`);
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
