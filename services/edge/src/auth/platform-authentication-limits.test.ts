import { describe, expect, it } from '@jest/globals';
import { createPlatformAuthenticationLimits } from './platform-authentication-limits.js';

const settings = { failuresBeforeBackoff: 3, windowMs: 60_000, maxKeys: 2 };

describe('createPlatformAuthenticationLimits', () => {
  it('answers 401 for the first failures of a window, then 429 until the window ends, never longer', () => {
    let now = 1_000_000;
    const limits = createPlatformAuthenticationLimits(settings, () => now);
    for (let i = 0; i < 3; i += 1) {
      expect(limits.recordFailure('198.51.100.1', undefined)).toBeUndefined();
    }
    expect(limits.recordFailure('198.51.100.1', undefined)).toEqual({
      limit: 'address',
      retryAfterSeconds: 60,
    });
    // Further refused guesses do not lengthen the back-off: the window's end stays.
    now += 20_000;
    for (let i = 0; i < 50; i += 1) limits.recordFailure('198.51.100.1', undefined);
    expect(limits.recordFailure('198.51.100.1', undefined)).toEqual({
      limit: 'address',
      retryAfterSeconds: 40,
    });
    // A new window starts with 401 again.
    now += 40_000;
    expect(limits.recordFailure('198.51.100.1', undefined)).toBeUndefined();
  });

  it('counts a client id over all addresses, and an address over all client ids', () => {
    const now = 5_000_000;
    const limits = createPlatformAuthenticationLimits(settings, () => now);
    for (let i = 0; i < 3; i += 1) {
      expect(limits.recordFailure(`198.51.100.${i}`, 'gwc_attacked')).toBeUndefined();
    }
    expect(limits.recordFailure('198.51.100.9', 'gwc_attacked')).toMatchObject({
      limit: 'client_id',
    });
    expect(limits.recordFailure('198.51.100.9', 'gwc_other')).toBeUndefined();
  });

  it('forgets the oldest keys beyond maxKeys', () => {
    const limits = createPlatformAuthenticationLimits(settings, () => 0);
    for (let i = 0; i < 3; i += 1) limits.recordFailure('198.51.100.1', undefined);
    // Two other addresses push the first one out: its count starts again.
    limits.recordFailure('198.51.100.2', undefined);
    limits.recordFailure('198.51.100.3', undefined);
    expect(limits.recordFailure('198.51.100.1', undefined)).toBeUndefined();
  });

  it('never refuses with failuresBeforeBackoff 0', () => {
    const limits = createPlatformAuthenticationLimits({ ...settings, failuresBeforeBackoff: 0 });
    for (let i = 0; i < 100; i += 1) {
      expect(limits.recordFailure('198.51.100.1', 'gwc_x')).toBeUndefined();
    }
  });
});
