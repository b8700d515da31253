import { describe, expect, it } from '@jest/globals';
import type { BenchReport } from './bench.js';
import { addSplitRatios, type ResultRow } from './report.js';
import { SPLIT_SCENARIOS } from './run.js';
import { checkTargets } from './targets.js';

const SHED_BODY =
  '{"code":"SERVICE_UNAVAILABLE","message":"The gateway is at capacity; retry shortly."}';

function row(name: string, connections: number, extra: Partial<ResultRow> = {}): ResultRow {
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

/** An S5 level at `pct`% of a capacity of 10,000 req/s, serving `served` x capacity as 200s. */
function overloadRow(pct: number, served: number, extra: Partial<ResultRow> = {}): ResultRow {
  const offered = 100 * pct * 30;
  return row('overload', 384, {
    requests: offered,
    statusCounts: { '200': served * 10_000 * 30, '503': offered - served * 10_000 * 30 },
    offeredPct: pct,
    offeredRequests: offered,
    servedShareOfCapacity: served,
    refusalBodies: { '503': SHED_BODY },
    refusalsWithoutRetryAfter: 0,
    timeouts: 0,
    ...(pct > 100 ? { rssGrowthPct: 2 } : {}),
    ...extra,
  });
}

function check(target: string, rows: ResultRow[]) {
  const report: BenchReport = {
    machine: {
      cpuModel: 'test',
      cores: 2,
      memoryGiB: 1,
      kernel: '',
      node: '',
      loadAverageAtStart: [],
    },
    startedAt: new Date(0).toISOString(),
    mode: 'full',
    settings: {},
    notes: [],
    results: rows,
  };
  return checkTargets(report).find((each) => each.target.startsWith(target));
}

describe('checkTargets, throughput ratios', () => {
  const baseline = row('baseline-express-redis-get', 50, { rps: 1_000 });
  const peer = row('peer-oidc-provider-introspect', 50, { rps: 900 });

  it('judges all-in-one introspection against the baseline and the peer at each level', () => {
    const s1 = row('introspect-allinone', 50, { rps: 1_200 });
    expect(check('S1 introspect all-in-one >= 1.0x baseline', [baseline, peer, s1])).toEqual({
      target: 'S1 introspect all-in-one >= 1.0x baseline (c)',
      value: '1.20x @50',
      holds: true,
    });
    const below = row('introspect-allinone', 50, { rps: 990 });
    expect(check('S1 introspect all-in-one >= 1.0x baseline', [baseline, below])?.holds).toBe(
      false,
    );
    // 1,200 / 900 = 1.33
    expect(check('S1 introspect all-in-one >= 1.3x the', [baseline, peer, s1])?.holds).toBe(true);
    const slow = row('introspect-allinone', 50, { rps: 1_150 });
    expect(check('S1 introspect all-in-one >= 1.3x the', [baseline, peer, slow])?.holds).toBe(
      false,
    );
  });

  it('judges split mode, start and exchange at their own thresholds', () => {
    const split = row('introspect-split', 50, { rps: 590 });
    expect(check('S1 introspect split', [baseline, split])?.holds).toBe(false);
    expect(check('S3 start', [baseline, row('start', 50, { rps: 800 })])?.holds).toBe(true);
    expect(check('S2 exchange', [baseline, row('exchange', 50, { rps: 790 })])?.holds).toBe(false);
  });

  it('is not judged without its rows', () => {
    expect(check('S2 exchange', [baseline])).toMatchObject({ holds: null, value: 'not measured' });
  });
});

describe("checkTargets, the split deployment's CPU against the all-in-one's", () => {
  /** A row whose processes used `ms` of CPU per operation over 1,000 operations. */
  const used = (name: string, connections: number, ms: number) =>
    row(name, connections, { serverCpuMs: ms * 1_000 });

  it('holds at 1.5x or less per operation, at each connection count of the same run', () => {
    const rows = [
      used('start', 50, 0.2),
      used('start', 100, 0.25),
      used('start-split', 50, 0.3),
      used('start-split', 100, 0.25),
    ];
    addSplitRatios(rows, SPLIT_SCENARIOS);
    expect(check('S3 start split CPU', rows)).toEqual({
      target: "S3 start split CPU per operation <= 1.5x the all-in-one's",
      value: '1.50x (0.300 ms / 0.2 ms) @50, 1.00x (0.250 ms / 0.25 ms) @100',
      holds: true,
    });
    const costly = [used('signin', 50, 4), used('signin-split', 50, 6.4)];
    addSplitRatios(costly, SPLIT_SCENARIOS);
    expect(check('S4 sign-in split CPU', costly)).toMatchObject({
      value: '1.60x (6.400 ms / 4 ms) @50',
      holds: false,
    });
  });

  it('is not judged without the all-in-one row of the same connection count', () => {
    const rows = [used('exchange', 50, 0.3), used('exchange-split', 100, 0.3)];
    addSplitRatios(rows, SPLIT_SCENARIOS);
    expect(check('S2 exchange split CPU', rows)?.holds).toBeNull();
  });
});

describe("checkTargets, S4 against the identity provider's CPU", () => {
  it('holds at 0.6x or less at every level', () => {
    const rows = [
      row('signin', 5, { gatewayCpuMsPerSignIn: 1.2, identityCpuMsPerSignIn: 2 }),
      row('signin', 10, { gatewayCpuMsPerSignIn: 1.5, identityCpuMsPerSignIn: 3 }),
    ];
    expect(check('S4 gateway CPU per sign-in <= 0.6x the identity', rows)).toMatchObject({
      value: '0.60x (1.2 ms / 2 ms) @5, 0.50x (1.5 ms / 3 ms) @10',
      holds: true,
    });
    const costly = row('signin', 5, { gatewayCpuMsPerSignIn: 1.3, identityCpuMsPerSignIn: 2 });
    expect(check('S4 gateway CPU per sign-in <= 0.6x the identity', [costly])?.holds).toBe(false);
  });
});

describe("checkTargets, S4 against the baseline build's CPU", () => {
  const before = (connections: number, ms: number) =>
    row('signin-baseline', connections, {
      gatewayCpuMsPerSignIn: ms,
      baselineRef: '3c5bade',
      baselineCommit: '3c5bade1234',
    });

  it('holds at 0.67x or less at each connection count both builds were measured at', () => {
    const rows = [
      row('signin', 50, { gatewayCpuMsPerSignIn: 2.68 }),
      row('signin', 100, { gatewayCpuMsPerSignIn: 2 }),
      before(50, 4),
      before(100, 4),
    ];
    expect(check('S4 gateway CPU per sign-in <= 0.67x the baseline', rows)).toEqual({
      target: "S4 gateway CPU per sign-in <= 0.67x the baseline build's",
      value: '0.67x (2.68 ms / 4 ms of 3c5bade) @50, 0.50x (2 ms / 4 ms of 3c5bade) @100',
      holds: true,
    });
    const costly = [row('signin', 50, { gatewayCpuMsPerSignIn: 2.72 }), before(50, 4)];
    expect(check('S4 gateway CPU per sign-in <= 0.67x the baseline', costly)?.holds).toBe(false);
  });

  it('is not judged without the baseline build measured', () => {
    const rows = [row('signin', 50, { gatewayCpuMsPerSignIn: 2 })];
    expect(check('S4 gateway CPU per sign-in <= 0.67x the baseline', rows)?.holds).toBeNull();
  });
});

describe('checkTargets, S5 overload', () => {
  const within = overloadRow(80, 0.8, { statusCounts: { '200': 240_000 } });
  // r = 0.2: bounds (1 - 1.2 r)/(1 - r) = 0.95 at 120% and (1 - 2 r)/(1 - r) = 0.75 at 200%.
  const judged = (extra120: Partial<ResultRow> = {}, extra200: Partial<ResultRow> = {}) => [
    within,
    overloadRow(120, 0.86, { refusalCostRatio: 0.2, servedBound: 0.95, ...extra120 }),
    overloadRow(200, 0.68, {
      refusalCostRatio: 0.2,
      servedBound: 0.75,
      cpuMsPerRefusal: 0.02,
      cpuMsPerAnswerAtCapacity: 0.1,
      ...extra200,
    }),
  ];

  it('holds when refusals are cheap, enough is served, the rest refused properly, and RSS steady', () => {
    const rows = judged();
    expect(check('S5 a refusal costs', rows)).toEqual({
      target: "S5 a refusal costs the gateway r <= 0.25 of an answer's CPU",
      value: 'r = 0.200 (0.02 ms / 0.1 ms) @200%',
      holds: true,
    });
    expect(check('S5 serves', rows)).toMatchObject({
      value: '0.86x of bound 0.95x @120%, 0.68x of bound 0.75x @200%',
      holds: true,
    });
    expect(check('S5 refuses', rows)?.holds).toBe(true);
    expect(check('S5 RSS', rows)?.holds).toBe(true);
  });

  it('does not hold when a refusal costs more than a quarter of an answer', () => {
    const rows = judged({}, { refusalCostRatio: 0.26 });
    expect(check('S5 a refusal costs', rows)?.holds).toBe(false);
  });

  it('judges the served share at each level against 0.9x of its own bound', () => {
    expect(check('S5 serves', judged({ servedShareOfCapacity: 0.85 }))?.holds).toBe(false);
    expect(check('S5 serves', judged({}, { servedShareOfCapacity: 0.67 }))?.holds).toBe(false);
  });

  it('does not hold with time-outs, unanswered requests or refusals without body or Retry-After', () => {
    const refuses = (extra: Partial<ResultRow>) =>
      check('S5 refuses', [within, overloadRow(120, 0.9, extra)])?.holds;
    expect(refuses({ errors: 3, timeouts: 3 })).toBe(false);
    expect(refuses({ requests: 100 * 120 * 30 - 1 })).toBe(false);
    expect(refuses({ refusalBodies: { '503': 'busy' } })).toBe(false);
    expect(refuses({ refusalsWithoutRetryAfter: 1 })).toBe(false);
    expect(refuses({ statusCounts: { '200': 270_000, '429': 90_000 } })).toBe(false);
  });

  it('does not hold when RSS grows by 10%, and is not judged without a reference', () => {
    expect(check('S5 RSS', [within, overloadRow(120, 0.9, { rssGrowthPct: 10 })])?.holds).toBe(
      false,
    );
    expect(check('S5 RSS', [overloadRow(120, 0.9, { rssGrowthPct: undefined })])?.holds).toBeNull();
  });

  it('does not judge the level within capacity, nor a served share without a bound', () => {
    expect(check('S5 serves', [within])?.holds).toBeNull();
    expect(check('S5 a refusal costs', [within])?.holds).toBeNull();
    expect(check('S5 serves', [within, overloadRow(120, 0.9)])?.holds).toBeNull();
  });
});

describe('checkTargets', () => {
  it('judges exactly these targets, and no latency', () => {
    const report = { results: [] } as unknown as BenchReport;
    expect(checkTargets(report).map((each) => each.target.split(' ')[0])).toEqual([
      'S1',
      'S1',
      'S1',
      'S2',
      'S3',
      'S4',
      'S4',
      'S5',
      'S5',
      'S5',
      'S5',
      'S1',
      'S2',
      'S3',
      'S4',
    ]);
    expect(checkTargets(report).some((each) => /p99|latency/i.test(each.target))).toBe(false);
  });
});
