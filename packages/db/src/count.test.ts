import { describe, it, expect } from '@jest/globals';
import { toCount } from './count.js';

describe('toCount', () => {
  it('reads numbers, bigints and digit strings', () => {
    expect(toCount(3)).toBe(3);
    expect(toCount(42n)).toBe(42);
    expect(toCount('17')).toBe(17);
  });

  it('refuses what is not a whole number that fits', () => {
    expect(() => toCount(undefined)).toThrow(TypeError);
    expect(() => toCount(1.5)).toThrow(TypeError);
    expect(() => toCount('12abc')).toThrow(TypeError);
    expect(() => toCount(2n ** 60n)).toThrow(TypeError);
  });
});
