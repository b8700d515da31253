// What a refusal costs the gateway and the share of capacity that leaves for answers (S5's
// judged figures, docs/benchmarks.md "What is judged").
import { describe, expect, it } from '@jest/globals';
import { refusalCost, servedBound } from './overload.js';

describe('refusalCost', () => {
  it("is the level's CPU left after its answers, per refusal, as a share of an answer's", () => {
    // 30 s at one core: 300,000 answers at 0.08 ms leave 6,000 ms for 300,000 refusals.
    const cost = refusalCost(0.08, { serverCpuMs: 30_000, answers: 300_000, refusals: 300_000 });
    expect(cost?.cpuMsPerRefusal).toBeCloseTo(0.02, 10);
    expect(cost?.ratio).toBeCloseTo(0.25, 10);
  });

  it('is unknown when nothing was refused', () => {
    expect(refusalCost(0.08, { serverCpuMs: 10_000, answers: 125_000, refusals: 0 })).toBe(
      undefined,
    );
  });
});

describe('servedBound', () => {
  it('is the whole capacity when a refusal costs nothing', () => {
    expect(servedBound(1.2, 0)).toBe(1);
    expect(servedBound(2, 0)).toBe(1);
  });

  it('is (1 - k·r)/(1 - r): what the CPU left after refusing the rest answers', () => {
    expect(servedBound(1.2, 0.25)).toBeCloseTo(0.9333, 4);
    expect(servedBound(2, 0.25)).toBeCloseTo(0.6667, 4);
    // Check against the model: served at 0.6667 and refused 2 - 0.6667 at a quarter each use
    // exactly the CPU of the whole capacity.
    const served = servedBound(2, 0.25);
    expect(served + (2 - served) * 0.25).toBeCloseTo(1, 10);
  });

  it('is nothing when refusing the excess alone takes the whole capacity', () => {
    expect(servedBound(10, 0.25)).toBe(0);
  });
});
