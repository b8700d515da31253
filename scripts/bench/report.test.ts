// The notes beside each row's figures, printed by `pnpm bench` and by to-markdown.ts for
// docs/benchmarks.md: one list, so both say the same.
import { describe, expect, it } from '@jest/globals';
import { rowNotes, type ResultRow } from './report.js';

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
          p99FromScheduleMs: 42.26,
          rssGrowthPct: -1.5,
          serverCpuPct: 99.6,
        }),
      ),
    ).toEqual([
      '200: 2000, 503: 1000',
      'offered 100/s (120%) open-loop',
      '200s at 0.93x capacity',
      'p99 from the schedule 42.3 ms',
      'RSS −1.5%',
      'server 100% CPU',
    ]);
  });

  it("gives the identity provider's CPU per sign-in", () => {
    expect(rowNotes(row({ name: 'signin', identityCpuMsPerSignIn: 6.25 }))).toEqual([
      'identity provider 6.25 ms CPU/sign-in',
    ]);
  });
});
