import type { GatewayUnderTest } from './gateway.js';
import { runLoad, type LoadRequest } from './load.js';
import { runOpenLoop } from './open-loop.js';
import { sampleRss, usageOver } from './processes.js';
import { round2 } from './report.js';
import type { BenchRun } from './run.js';

/**
 * S5's clients: a fixed pool of kept-alive connections, nearly four times the 100 requests the
 * gateway admits at once, so the pool itself does not cap the load offered at 120% (about 200
 * requests in flight: rate times latency).
 */
export const OVERLOAD_CONNECTIONS = 384;

/**
 * S5: S1's requests offered open-loop at shares of the capacity measured right before it. The
 * level below capacity is the reference of RSS growth (the same process, clients and generator;
 * only the load differs); the levels beyond it are judged.
 */
export async function measureOverload(
  run: BenchRun,
  gateway: GatewayUnderTest,
  requests: LoadRequest[],
): Promise<void> {
  const capacityRps = await measureCapacity(run, gateway, requests);
  let referenceRss: number | undefined;
  for (const factor of run.profile.overloadFactors) {
    const offeredRps = capacityRps * factor;
    run.step(`overload: ${offeredRps.toFixed(0)} req/s offered (${Math.round(factor * 100)}%)`);
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
    if (factor < 1) referenceRss = medianBytes;
    const servedRps = (result.statusCounts['200'] ?? 0) / result.durationSeconds;
    const answered = { ...result, requests: result.answered };
    run.addRow('overload', OVERLOAD_CONNECTIONS, answered, {
      ...(await usage.done(answered)),
      p99FromScheduleMs: result.p99FromScheduleMs,
      refusalP99Ms: result.refusalP99Ms,
      refusalBodies: result.bodies,
      refusalsWithoutRetryAfter: result.withoutRetryAfter,
      socketErrors: result.socketErrors,
      timeouts: result.timeouts,
      offeredPct: Math.round(factor * 100),
      offeredRps: round2(offeredRps),
      capacityRps: round2(capacityRps),
      servedRps: round2(servedRps),
      servedShareOfCapacity: round2(servedRps / capacityRps),
      offeredRequests: result.offered,
      rssMedianBytes: medianBytes,
      ...(factor < 1 || referenceRss === undefined
        ? {}
        : { rssGrowthPct: round2(((medianBytes - referenceRss) / referenceRss) * 100) }),
    });
  }
}

/**
 * The capacity S5's rates are shares of: S1's load, closed-loop at the connections of S1's
 * best level, measured again right before S5 (not recorded as an S1 row). A machine's speed
 * swings from one minute to the next, and from a faster minute's rate the level meant to be
 * within capacity would already be beyond it.
 */
async function measureCapacity(
  run: BenchRun,
  gateway: GatewayUnderTest,
  requests: LoadRequest[],
): Promise<number> {
  const s1 = run.report.results.filter((row) => row.name === 'introspect-allinone');
  const best = s1.reduce((a, b) => (b.rps > a.rps ? b : a), s1[0] ?? { connections: 100, rps: 0 });
  const result = await runLoad({
    url: gateway.url,
    connections: best.connections,
    durationSeconds: run.profile.measureSeconds,
    requests,
    expectedStatuses: [200],
  });
  if (result.errors > 0 || result.rps <= 0) {
    throw new Error(`S5's capacity measurement had ${result.errors} errors`);
  }
  run.step(`overload: capacity ${result.rps.toFixed(0)} req/s @${best.connections} right now`);
  return result.rps;
}
