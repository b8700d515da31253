import { describe, expect, it } from '@jest/globals';
import { checkTargets, type BenchReport } from './bench.js';
import type { ResultRow } from './report.js';

// Issue 8, S5: beyond capacity the gateway answers fast (the excess refused with 429/503 and
// the error body), with no errors or time-outs. The judged level (120%) must keep its p99
// from the schedule within twice the same clients' p99 at 80%, within capacity.
const SHED_BODY =
  '{"code":"SERVICE_UNAVAILABLE","message":"The gateway is at capacity; retry shortly."}';

/** A measured level of `name`: no errors, `extra` over plain defaults. */
function measuredRow(name: string, connections: number, extra: Partial<ResultRow>): ResultRow {
  return {
    name,
    connections,
    rps: 100,
    p50Ms: 1,
    p99Ms: 2,
    errors: 0,
    requests: 1_000,
    durationSeconds: 10,
    statusCounts: {},
    ...extra,
  };
}

function overloadRow(pct: number, p99FromScheduleMs: number, extra: Partial<ResultRow> = {}) {
  const offeredRps = 100 * pct;
  return measuredRow('overload', 384, {
    rps: offeredRps,
    p99Ms: p99FromScheduleMs,
    requests: offeredRps * 30,
    durationSeconds: 30,
    statusCounts: { '200': offeredRps * 20, '503': offeredRps * 10 },
    offeredPct: pct,
    offeredRps,
    capacityRps: 10_000,
    s1BestRps: 11_000,
    offeredRequests: offeredRps * 30,
    p99FromScheduleMs,
    judged: pct === 120,
    refusalBodies: { '503': SHED_BODY },
    comparedWithConnections: 100,
    ...extra,
  });
}

/** The check whose target starts with `target`, over a report of S1's row and `rows`. */
function checkOf(target: string, rows: ResultRow[]) {
  const report: BenchReport = {
    machine: {
      cpuModel: 'test',
      cores: 2,
      memoryGiB: 1,
      kernel: 'test',
      node: 'v20',
      loadAverageAtStart: [],
    },
    startedAt: new Date(0).toISOString(),
    mode: 'full',
    settings: {},
    notes: [],
    results: [
      measuredRow('introspect-allinone', 100, {
        rps: 10_000,
        p50Ms: 5,
        p99Ms: 10,
        requests: 100_000,
        statusCounts: { '200': 100_000 },
      }),
      ...rows,
    ],
  };
  return checkTargets(report).find((check) => check.target.startsWith(target));
}

const s5 = (rows: ResultRow[]) => checkOf('S5 at 120%', rows);

describe('checkTargets, S5 fast answers', () => {
  it('holds when the p99 at 120% is within twice the 80% level, however it compares with S1', () => {
    const check = s5([overloadRow(80, 25), overloadRow(120, 49), overloadRow(200, 400)]);
    expect(check?.holds).toBe(true);
    // S1's closed-loop p99 (10 ms) is shown beside it, not judged.
    expect(check?.value).toContain("2.0x the 80% level's, 4.9x S1's closed-loop p99 10 ms");
    // The rates' reference, measured right before S5, is shown with S1's best rate.
    expect(check?.value).toMatch(/^capacity 10000 req\/s right before S5 \(S1's best 11000\): /);
  });

  it('does not hold beyond twice the 80% level', () => {
    expect(s5([overloadRow(80, 21), overloadRow(120, 51)])?.holds).toBe(false);
  });

  it('does not hold with errors, unsent requests or refusals without the error body', () => {
    expect(s5([overloadRow(80, 25), overloadRow(120, 30, { errors: 1 })])?.holds).toBe(false);
    expect(
      s5([overloadRow(80, 25), overloadRow(120, 30, { requests: 100 * 120 * 30 - 1 })])?.holds,
    ).toBe(false);
    expect(
      s5([overloadRow(80, 25), overloadRow(120, 30, { refusalBodies: { '503': 'busy' } })])?.holds,
    ).toBe(false);
  });

  it('is not judged without the 120% level, and does not hold without the 80% reference', () => {
    expect(s5([overloadRow(80, 25)])?.holds).toBeNull();
    expect(s5([overloadRow(120, 30)])?.holds).toBe(false);
  });
});

// Issue 8, S4: the limit is absolute (2 ms of gateway CPU per sign-in); the same CPU in requests
// of baseline (c) at the same connection count, and as a share of the identity provider's CPU
// per sign-in, are shown beside it, not judged.
describe('checkTargets, S4 gateway CPU per sign-in', () => {
  it("holds at 2 ms or less, and shows the CPU in baseline (c)'s requests", () => {
    const check = checkOf('S4', [
      measuredRow('baseline-express-redis-get', 50, { serverCpuMsPerRequest: 0.15 }),
      measuredRow('signin', 50, { gatewayCpuMsPerSignIn: 1.95, identityCpuMsPerSignIn: 3.9 }),
      measuredRow('signin', 100, { gatewayCpuMsPerSignIn: 2 }),
    ]);
    expect(check?.holds).toBe(true);
    // Neither a baseline nor the identity provider's CPU at 100: the milliseconds alone.
    expect(check?.value).toBe(
      "1.95 ms (13.0x (c)'s CPU per request, 0.50x the identity provider's) @50, 2 ms @100",
    );
  });

  it('does not hold above 2 ms, however cheap it is in baseline requests', () => {
    const check = checkOf('S4', [
      measuredRow('baseline-express-redis-get', 50, { serverCpuMsPerRequest: 0.3 }),
      measuredRow('signin', 50, { gatewayCpuMsPerSignIn: 2.4 }),
    ]);
    expect(check?.holds).toBe(false);
    expect(check?.value).toBe("2.4 ms (8.0x (c)'s CPU per request) @50");
  });
});
