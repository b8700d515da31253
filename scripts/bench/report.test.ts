// The notes beside each row's figures, printed by `pnpm bench` and by to-markdown.ts for
// docs/benchmarks.md: one list, so both say the same.
import { describe, expect, it } from '@jest/globals';
import { describeRefusalCost, rowNotes, type ResultRow } from './report.js';

const row = (extra: Partial<ResultRow>): ResultRow => ({
  name: 'overload',
  connections: 384,
  rps: 100,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  requests: 3_000,
  durationSeconds: 30,
  statusCounts: {},
  ...extra,
});

describe('rowNotes', () => {
  it('gives the answers, the load offered, what was served, memory and the CPU, in that order', () => {
    expect(
      rowNotes(
        row({
          statusCounts: { '200': 2_000, '503': 1_000 },
          offeredRps: 100.4,
          offeredPct: 120,
          servedShareOfCapacity: 0.93,
          servedBound: 0.9524,
          refusalCostRatio: 0.2,
          p99FromScheduleMs: 42.26,
          refusalP99Ms: 3.14,
          rssGrowthPct: -1.5,
          serverCpuPct: 99.6,
        }),
      ),
    ).toEqual([
      '200: 2000, 503: 1000',
      'offered 100/s (120%) open-loop',
      '200s at 0.93x capacity, bound 0.95x (r 0.200)',
      'p99 from the schedule 42.3 ms',
      'refusals p99 3.1 ms',
      'RSS −1.5%',
      'server 100% CPU',
    ]);
  });

  it("gives the build, the identity provider's CPU and the Redis commands per sign-in", () => {
    expect(
      rowNotes(
        row({
          name: 'signin-baseline',
          baselineCommit: '3c5bade1234',
          identityCpuMsPerSignIn: 6.25,
          redisCommandsPerSignIn: 14.26,
          redisScriptsPerSignIn: 3,
        }),
      ),
    ).toEqual([
      'build 3c5bade',
      'identity provider 6.25 ms CPU/sign-in',
      '14.3 Redis commands/sign-in (3.0 scripts)',
    ]);
  });
});

describe('rowNotes of a split row', () => {
  it("gives its CPU per operation against the all-in-one's, then each process's CPU and RSS", () => {
    expect(
      rowNotes(
        row({
          name: 'start-split',
          cpuRatioToAllInOne: 1.234,
          allInOneCpuMsPerRequest: 0.21,
          cpuMsPerRequestByProcess: { 'split-edge': 0.12, 'split-auth-flow': 0.1345 },
          rssMedianBytesByProcess: {
            'split-edge': 150 * 2 ** 20,
            'split-auth-flow': 99.6 * 2 ** 20,
          },
        }),
      ),
    ).toEqual([
      "CPU/op 1.23x the all-in-one's (0.21 ms)",
      'CPU ms/op: edge 0.120, auth-flow 0.135',
      'RSS: edge 150 MB, auth-flow 100 MB',
    ]);
  });
});

describe('describeRefusalCost', () => {
  it('names r, the CPU it comes from and the bounds it sets', () => {
    expect(
      describeRefusalCost({
        cpuMsPerAnswer: 0.1,
        cpuMsPerRefusal: 0.02,
        refusalCostRatio: 0.2,
        refusalCostFrom: '200%',
        servedBounds: { '120%': 0.95, '200%': 0.75 },
      }),
    ).toBe(
      'S5: a refusal costs the gateway r = 0.200 of an answer (0.02 ms / 0.1 ms of CPU, from ' +
        'the 200% level and the capacity run); served-share bounds (1 − k·r)/(1 − r): ' +
        '0.95x at 120%, 0.75x at 200%.',
    );
  });
});
