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
  it('gives the answers, the load offered, memory and who used the CPU, in that order', () => {
    expect(
      rowNotes(
        row({
          statusCounts: { '200': 2_000, '503': 1_000 },
          offeredRps: 100.4,
          offeredPct: 120,
          p99FromScheduleMs: 42.26,
          backlogMax: 707,
          generatorStallMaxMs: 14.6,
          rssGrowthPct: -1.5,
          serverCpuPct: 99.6,
          machineBusyPct: 70.2,
          machineStealPct: 0.4,
        }),
      ),
    ).toEqual([
      '200: 2000, 503: 1000',
      'offered 100/s (120%) open-loop',
      'p99 from the schedule 42.3 ms',
      'up to 707 waiting for a connection',
      'generator stalled up to 15 ms',
      'RSS −1.5%',
      'server 100% CPU',
      'machine 70% busy, 0.4% stolen',
    ]);
  });

  it('leaves out a backlog that never formed', () => {
    expect(rowNotes(row({ backlogMax: 0, generatorStallMaxMs: 3.2 }))).toEqual([
      'generator stalled up to 3 ms',
    ]);
  });

  it("gives a sign-in's kernel part and the identity service's CPU, and no steal when none", () => {
    expect(
      rowNotes(
        row({
          name: 'signin',
          gatewaySystemCpuMsPerSignIn: 0.3,
          identityCpuMsPerSignIn: 6.25,
          machineBusyPct: 93,
          machineStealPct: 0,
        }),
      ),
    ).toEqual([
      "0.30 ms of the gateway's in the kernel",
      'identity service 6.3 ms CPU/sign-in',
      'machine 93% busy',
    ]);
  });
});
