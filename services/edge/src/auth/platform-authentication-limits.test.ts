import { describe, expect, it } from '@jest/globals';
import { createPlatformAuthenticationLimits } from './platform-authentication-limits.js';

const settings = {
  failuresBeforeBackoff: 3,
  windowMs: 60_000,
  firstBackoffMs: 1000,
  maxBackoffMs: 8000,
  maxKeys: 2,
};

describe('createPlatformAuthenticationLimits', () => {
  it('backs an address off after its failures, doubling per further attempt up to the cap', () => {
    let now = 1_000_000;
    const limits = createPlatformAuthenticationLimits(settings, () => now);
    const clientId = () => 'gwc_a';
    for (let i = 0; i < 3; i += 1) {
      expect(limits.check('192.0.2.1', clientId)).toBeUndefined();
      limits.recordFailure('192.0.2.1', 'gwc_a');
    }
    const seconds = Array.from(
      { length: 5 },
      () => limits.check('192.0.2.1', clientId)?.retryAfterSeconds,
    );
    expect(seconds).toEqual([2, 4, 8, 8, 8]);
    // After the back-off and the window, the address starts afresh.
    now += 61_000;
    expect(limits.check('192.0.2.1', clientId)).toBeUndefined();
  });

  it('refuses a client id under attack only to addresses that fail themselves', () => {
    const now = 1_000_000;
    const limits = createPlatformAuthenticationLimits({ ...settings, maxKeys: 10 }, () => now);
    for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
      limits.recordFailure(address, 'gwc_a');
    }
    expect(limits.check('192.0.2.9', () => 'gwc_a')).toBeUndefined();
    expect(limits.check('192.0.2.1', () => 'gwc_b')).toBeUndefined();
    expect(limits.check('192.0.2.1', () => 'gwc_a')).toEqual({
      limit: 'client_id',
      retryAfterSeconds: 2,
    });
  });

  it('looks nothing up while no failure is counted, and forgets the oldest keys beyond maxKeys', () => {
    const limits = createPlatformAuthenticationLimits(settings, () => 1_000_000);
    let parsed = 0;
    const clientId = () => {
      parsed += 1;
      return 'gwc_a';
    };
    expect(limits.check('192.0.2.1', clientId)).toBeUndefined();
    expect(parsed).toBe(0);
    for (let i = 0; i < 3; i += 1) limits.recordFailure('192.0.2.1', undefined);
    limits.recordFailure('192.0.2.2', undefined);
    limits.recordFailure('192.0.2.3', undefined);
    expect(limits.check('192.0.2.1', clientId)).toBeUndefined();
  });

  it('never refuses with failuresBeforeBackoff 0', () => {
    const limits = createPlatformAuthenticationLimits({ ...settings, failuresBeforeBackoff: 0 });
    for (let i = 0; i < 20; i += 1) limits.recordFailure('192.0.2.1', 'gwc_a');
    expect(limits.check('192.0.2.1', () => 'gwc_a')).toBeUndefined();
  });
});
