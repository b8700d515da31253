import { BASELINE, type ResultRow, type TargetCheck } from './report.js';
import type { BenchReport } from './run.js';

// What the bench judges, and nothing else. Every check compares figures of the same run, so
// it holds on any idle machine or on none; latencies and S6's bytes are shown, not judged.

const PEER = 'peer-oidc-provider-introspect';

/** Each judged target: whether it holds in `report`, with the figures it was judged on. */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const rows = (name: string) => report.results.filter((row) => row.name === name);
  const at = (name: string, connections: number) =>
    report.results.find((row) => row.name === name && row.connections === connections);
  /** `name`'s rate over `other`'s at each connection count both were measured at. */
  const rateRatio = (target: string, name: string, other: string, minimum: number) =>
    judge(
      target,
      rows(name).flatMap((row) => {
        const reference = at(other, row.connections);
        if (reference === undefined || reference.rps <= 0) return [];
        const ratio = row.rps / reference.rps;
        return [{ text: `${ratio.toFixed(2)}x @${row.connections}`, holds: ratio >= minimum }];
      }),
    );
  return [
    rateRatio(
      'S1 introspect all-in-one >= 1.0x baseline (c)',
      'introspect-allinone',
      BASELINE,
      1.0,
    ),
    rateRatio(
      'S1 introspect all-in-one >= 1.3x the oidc-provider peer',
      'introspect-allinone',
      PEER,
      1.3,
    ),
    rateRatio('S1 introspect split >= 0.6x baseline (c)', 'introspect-split', BASELINE, 0.6),
    rateRatio('S2 exchange >= 0.8x baseline (c)', 'exchange', BASELINE, 0.8),
    rateRatio('S3 start >= 0.8x baseline (c)', 'start', BASELINE, 0.8),
    signInCpu(rows('signin')),
    signInCpuAgainstBaseline(rows('signin'), rows('signin-baseline')),
    ...overloadChecks(rows('overload')),
    splitCpu('S1 introspect', rows('introspect-split')),
    splitCpu('S2 exchange', rows('exchange-split')),
    splitCpu('S3 start', rows('start-split')),
    splitCpu('S4 sign-in', rows('signin-split')),
  ];
}

/** The most CPU an operation may cost the split deployment, as a multiple of the all-in-one's. */
const SPLIT_CPU_LIMIT = 1.5;

/**
 * The split deployment's CPU per operation (its four processes together) against the
 * all-in-one gateway's in the same run, at each connection count (report.ts addSplitRatios).
 */
function splitCpu(operation: string, split: ResultRow[]): TargetCheck {
  return judge(
    `${operation} split CPU per operation <= ${SPLIT_CPU_LIMIT}x the all-in-one's`,
    split.flatMap((row) => {
      if (typeof row.cpuRatioToAllInOne !== 'number') return [];
      const perOperation = row.requests > 0 ? Number(row.serverCpuMs) / row.requests : 0;
      return [
        {
          text:
            `${row.cpuRatioToAllInOne.toFixed(2)}x (${perOperation.toFixed(3)} ms / ` +
            `${String(row.allInOneCpuMsPerRequest)} ms) @${row.connections}`,
          holds: row.cpuRatioToAllInOne <= SPLIT_CPU_LIMIT,
        },
      ];
    }),
  );
}

type Judged = { text: string; holds: boolean };

function judge(target: string, judged: Judged[]): TargetCheck {
  if (judged.length === 0) return { target, value: 'not measured', holds: null };
  return {
    target,
    value: judged.map((each) => each.text).join(', '),
    holds: judged.every((each) => each.holds),
  };
}

/** S4: the gateway's CPU per sign-in as a share of the identity provider's, same seconds. */
function signInCpu(signIns: ResultRow[]): TargetCheck {
  return judge(
    "S4 gateway CPU per sign-in <= 0.6x the identity provider's",
    signIns.flatMap((row) => {
      const gateway = Number(row.gatewayCpuMsPerSignIn);
      const identity = Number(row.identityCpuMsPerSignIn);
      if (!(gateway > 0 && identity > 0)) return [];
      const ratio = gateway / identity;
      return [
        {
          text: `${ratio.toFixed(2)}x (${gateway} ms / ${identity} ms) @${row.connections}`,
          holds: ratio <= 0.6,
        },
      ];
    }),
  );
}

/** S4: the gateway's CPU per sign-in against the baseline build's, at each connection count. */
function signInCpuAgainstBaseline(signIns: ResultRow[], baseline: ResultRow[]): TargetCheck {
  return judge(
    "S4 gateway CPU per sign-in <= 0.67x the baseline build's",
    signIns.flatMap((row) => {
      const reference = baseline.find((each) => each.connections === row.connections);
      const gateway = Number(row.gatewayCpuMsPerSignIn);
      const before = Number(reference?.gatewayCpuMsPerSignIn);
      if (!(gateway > 0 && before > 0)) return [];
      const ratio = gateway / before;
      const build = String(reference?.baselineCommit ?? reference?.baselineRef ?? '?');
      return [
        {
          text: `${ratio.toFixed(2)}x (${gateway} ms / ${before} ms of ${build.slice(0, 7)}) @${row.connections}`,
          holds: ratio <= 0.67,
        },
      ];
    }),
  );
}

/** The highest share of an answer's CPU a refusal may cost the gateway. */
const REFUSAL_COST_LIMIT = 0.25;

/** The share of its bound the served share must reach at each judged S5 level. */
const SHARE_OF_BOUND = 0.9;

/** The offered loads (% of capacity) whose served share is judged. */
const JUDGED_LOADS = new Set([120, 200]);

/**
 * S5 as users feel it, at 120% and 200% of the capacity measured right before it: what a
 * refusal costs the gateway (r, a share of an answer's CPU), what is served against the bound
 * r sets, and how the rest is refused at every level beyond capacity.
 */
function overloadChecks(overload: ResultRow[]): TargetCheck[] {
  const judged = overload.filter((row) => JUDGED_LOADS.has(Number(row.offeredPct)));
  const beyondCapacity = overload.filter((row) => Number(row.offeredPct) > 100);
  const label = (row: ResultRow) => `@${String(row.offeredPct)}%`;
  const costFrom = beyondCapacity.find((row) => typeof row.cpuMsPerRefusal === 'number');
  return [
    judge(
      `S5 a refusal costs the gateway r <= ${REFUSAL_COST_LIMIT} of an answer's CPU`,
      costFrom === undefined
        ? []
        : [
            {
              text:
                `r = ${Number(costFrom.refusalCostRatio).toFixed(3)} ` +
                `(${String(costFrom.cpuMsPerRefusal)} ms / ` +
                `${String(costFrom.cpuMsPerAnswerAtCapacity)} ms) ${label(costFrom)}`,
              holds: Number(costFrom.refusalCostRatio) <= REFUSAL_COST_LIMIT,
            },
          ],
    ),
    judge(
      `S5 serves >= ${SHARE_OF_BOUND}x its bound (1 - k·r)/(1 - r) of capacity in 200 answers at 120% and 200%`,
      judged.flatMap((row) => {
        const share = Number(row.servedShareOfCapacity);
        const bound = Number(row.servedBound);
        if (typeof row.servedBound !== 'number') return [];
        return [
          {
            text: `${share.toFixed(2)}x of bound ${bound.toFixed(2)}x ${label(row)}`,
            holds: share >= SHARE_OF_BOUND * bound,
          },
        ];
      }),
    ),
    judge(
      'S5 refuses the rest with 503, the error body and Retry-After; no time-outs or connection errors',
      beyondCapacity.map((row) => {
        const refused = row.statusCounts['503'] ?? 0;
        const holds =
          refusalsAreProper(row) && row.errors === 0 && row.requests === row.offeredRequests;
        return {
          text: `${refused} refused, ${row.errors} errors (${String(row.timeouts)} time-outs) ${label(row)}`,
          holds,
        };
      }),
    ),
    judge(
      'S5 RSS grows < 10% (median, against the level within capacity)',
      // --quick offers one level only, beyond capacity: no reference, so not judged.
      beyondCapacity.flatMap((row) =>
        typeof row.rssGrowthPct === 'number'
          ? [{ text: `${row.rssGrowthPct}% ${label(row)}`, holds: row.rssGrowthPct < 10 }]
          : [],
      ),
    ),
  ];
}

/** Every answer but 200 is a 503 with the error body and a Retry-After header. */
export function refusalsAreProper(row: ResultRow): boolean {
  const statuses = Object.keys(row.statusCounts).filter((status) => status !== '200');
  const bodies = (row.refusalBodies ?? {}) as Record<string, string>;
  return (
    statuses.every((status) => status === '503') &&
    row.refusalsWithoutRetryAfter === 0 &&
    Object.values(bodies).every((body) => /"code":"SERVICE_UNAVAILABLE"/.test(body))
  );
}
