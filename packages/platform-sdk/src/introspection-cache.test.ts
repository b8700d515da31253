import { describe, expect, it } from '@jest/globals';
import type { IntrospectedSession } from './gateway-types.js';
import {
  cacheExpiry,
  createIntrospectionCache,
  introspectionCacheKey,
} from './introspection-cache.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function sessionUntil(expiresAt: number, userId?: string): IntrospectedSession {
  return {
    sessionId: '6f9619ff-8b86-4d01-b42d-00cf4fc964ff',
    expiresAt: new Date(expiresAt).toISOString(),
    platformKey: 'SHOP',
    user: {
      id: userId ?? '0b5f0f2e-4c1e-4e43-9d2a-7f3b7c3e9a11',
      issuer: 'http://localhost:9000',
      subject: 'user-1',
      email: 'user-1@example.test',
      emailVerified: true,
      status: 'ACTIVE',
    },
    environment: { key: 'PROD', tier: 'development' },
  };
}

function clock(start = T0) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('cacheExpiry (spec 4.5: 30 to 60 s, never beyond expiresAt)', () => {
  it('is now + ttl while the session lives longer', () => {
    expect(cacheExpiry(T0, 45, new Date(T0 + 3_600_000).toISOString())).toBe(T0 + 45_000);
  });

  it('is expiresAt when the session ends within the ttl', () => {
    expect(cacheExpiry(T0, 45, new Date(T0 + 10_000).toISOString())).toBe(T0 + 10_000);
  });

  it('caches nothing with a ttl of 0 (introspectCacheSeconds: 0)', () => {
    expect(cacheExpiry(T0, 0, new Date(T0 + 3_600_000).toISOString())).toBeUndefined();
  });

  it('does not cache a session that has ended or an unreadable expiresAt', () => {
    expect(cacheExpiry(T0, 45, new Date(T0).toISOString())).toBeUndefined();
    expect(cacheExpiry(T0, 45, new Date(T0 - 1).toISOString())).toBeUndefined();
    expect(cacheExpiry(T0, 45, 'not a date')).toBeUndefined();
  });
});

describe('the introspection cache', () => {
  it('keeps an active answer for the ttl, then misses', () => {
    const time = clock();
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: time.now });
    const session = sessionUntil(T0 + 3_600_000);
    cache.remember('token-1', session, cache.ticket());
    time.advance(44_999);
    expect(cache.get('token-1')).toBe(session);
    time.advance(1);
    expect(cache.get('token-1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never serves an entry past the session expiresAt', () => {
    const time = clock();
    const cache = createIntrospectionCache({ ttlSeconds: 60, now: time.now });
    cache.remember('token-1', sessionUntil(T0 + 5_000), cache.ticket());
    expect(cache.expiryOf('token-1')).toBe(T0 + 5_000);
    time.advance(4_999);
    expect(cache.get('token-1')).toBeDefined();
    time.advance(1);
    expect(cache.get('token-1')).toBeUndefined();
  });

  it('keys entries by SHA-256 of the token, not the token', () => {
    expect(introspectionCacheKey('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: () => T0 });
    cache.remember('token-1', sessionUntil(T0 + 60_000), cache.ticket());
    expect(cache.get('token-2')).toBeUndefined();
  });

  it('forgets a token at logout', () => {
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: () => T0 });
    cache.remember('token-1', sessionUntil(T0 + 60_000), cache.ticket());
    cache.forget('token-1');
    expect(cache.get('token-1')).toBeUndefined();
  });

  it('does not cache an answer to a request that was under way when a token was forgotten', () => {
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: () => T0 });
    const ticket = cache.ticket();
    cache.forget('token-1'); // a logout while the introspection was in flight
    cache.remember('token-1', sessionUntil(T0 + 60_000), ticket);
    expect(cache.get('token-1')).toBeUndefined();
    cache.remember('token-1', sessionUntil(T0 + 60_000), cache.ticket());
    expect(cache.get('token-1')).toBeDefined();
  });

  it("forgets all of a user's tokens when the user's other sessions end, and no one else's", () => {
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: () => T0 });
    const bob = 'c3a1e3a4-5f6b-4c7d-8e9f-a0b1c2d3e4f5';
    cache.remember('alice-here', sessionUntil(T0 + 60_000), cache.ticket());
    cache.remember('alice-elsewhere', sessionUntil(T0 + 60_000), cache.ticket());
    cache.remember('bob', sessionUntil(T0 + 60_000, bob), cache.ticket());
    const ticket = cache.ticket();
    cache.forgetUserOf('alice-here');
    expect(cache.get('alice-here')).toBeUndefined();
    expect(cache.get('alice-elsewhere')).toBeUndefined();
    expect(cache.get('bob')).toBeDefined();
    // An answer that was under way may describe a session from before: not cached.
    cache.remember('alice-elsewhere', sessionUntil(T0 + 60_000), ticket);
    expect(cache.get('alice-elsewhere')).toBeUndefined();
  });

  it("forgets every token when the caller's own entry is gone: the user is unknown", () => {
    const cache = createIntrospectionCache({ ttlSeconds: 45, now: () => T0 });
    cache.remember('alice-elsewhere', sessionUntil(T0 + 60_000), cache.ticket());
    cache.remember(
      'bob',
      sessionUntil(T0 + 60_000, 'c3a1e3a4-5f6b-4c7d-8e9f-a0b1c2d3e4f5'),
      cache.ticket(),
    );
    cache.forgetUserOf('alice-here');
    expect(cache.size).toBe(0);
  });

  it('stays within maxEntries, dropping expired entries first, then the oldest', () => {
    const time = clock();
    const cache = createIntrospectionCache({ ttlSeconds: 30, now: time.now, maxEntries: 3 });
    cache.remember('short', sessionUntil(T0 + 1_000), cache.ticket());
    cache.remember('old', sessionUntil(T0 + 60_000), cache.ticket());
    cache.remember('middle', sessionUntil(T0 + 60_000), cache.ticket());
    time.advance(2_000);
    cache.remember('new', sessionUntil(T0 + 60_000), cache.ticket());
    expect(cache.size).toBe(3);
    expect(cache.get('old')).toBeDefined();
    cache.remember('newest', sessionUntil(T0 + 60_000), cache.ticket());
    expect(cache.size).toBe(3);
    expect(cache.get('old')).toBeUndefined();
    expect(cache.get('middle')).toBeDefined();
    expect(cache.get('newest')).toBeDefined();
  });
});
