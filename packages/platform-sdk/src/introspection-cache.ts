import { createHash } from 'node:crypto';
import type { IntrospectedSession } from './gateway-types.js';

// Spec 4.5 caller guidance, all of it in this file: cache only `active: true`, keyed by a
// hash of the token, for at most 30 to 60 s and never beyond `expiresAt`. `active: false`,
// errors and time-outs never reach the cache (the caller only calls `remember` for an active
// answer). A logout forgets the token, ending the user's other sessions forgets all of the
// user's, and an answer to a request that was already on its way when some token was
// forgotten is not cached: it may describe the session from before the logout.

export type IntrospectionCacheOptions = {
  /** How long an active answer is reused, in seconds. */
  ttlSeconds: number;
  /** The clock, in epoch milliseconds. Default Date.now. */
  now?: () => number;
  /** Bound on the entries kept; expired ones go first, then the oldest. Default 10 000. */
  maxEntries?: number;
};

export type IntrospectionCache = {
  /** A ticket to pass to `remember` for an answer to a request started now. */
  ticket(): number;
  /** The cached session for the token, if one is still fresh. */
  get(token: string): IntrospectedSession | undefined;
  /** Caches an active answer until min(now + ttl, session.expiresAt). */
  remember(token: string, session: IntrospectedSession, ticket: number): void;
  /** Drops the token (logout): no answer from before this call will be cached. */
  forget(token: string): void;
  /**
   * Drops every entry of the user whose session the token is (after ending the user's other
   * sessions, whose tokens this process never sees); every entry when the token's own entry
   * is gone. No answer from before this call will be cached.
   */
  forgetUserOf(token: string): void;
  /** When the cached entry for the token stops being used (epoch ms), for tests and logs. */
  expiryOf(token: string): number | undefined;
  readonly size: number;
};

/** The cache key: SHA-256 of the token, base64url. The token itself is never kept. */
export function introspectionCacheKey(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** min(now + ttl, expiresAt), or undefined when the answer must not be cached at all. */
export function cacheExpiry(
  now: number,
  ttlSeconds: number,
  expiresAt: string,
): number | undefined {
  const sessionEnd = Date.parse(expiresAt);
  if (Number.isNaN(sessionEnd)) return undefined;
  const until = Math.min(now + ttlSeconds * 1000, sessionEnd);
  return until > now ? until : undefined;
}

type Entry = { session: IntrospectedSession; until: number };

export function createIntrospectionCache(options: IntrospectionCacheOptions): IntrospectionCache {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();
  let forgets = 0;

  const fresh = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now()) return entry;
    entries.delete(key);
    return undefined;
  };

  const makeRoom = (): void => {
    if (entries.size < maxEntries) return;
    const at = now();
    for (const [key, entry] of entries) if (entry.until <= at) entries.delete(key);
    // Map iteration is insertion order: the oldest entries go first.
    for (const key of entries.keys()) {
      if (entries.size < maxEntries) break;
      entries.delete(key);
    }
  };

  return {
    ticket: () => forgets,
    get(token) {
      return fresh(introspectionCacheKey(token))?.session;
    },
    remember(token, session, ticket) {
      if (ticket !== forgets) return;
      const until = cacheExpiry(now(), options.ttlSeconds, session.expiresAt);
      if (until === undefined) return;
      const key = introspectionCacheKey(token);
      entries.delete(key);
      makeRoom();
      entries.set(key, { session, until });
    },
    forget(token) {
      forgets += 1;
      entries.delete(introspectionCacheKey(token));
    },
    forgetUserOf(token) {
      forgets += 1;
      const userId = fresh(introspectionCacheKey(token))?.session.user.id;
      for (const [key, entry] of entries) {
        if (userId === undefined || entry.session.user.id === userId) entries.delete(key);
      }
    },
    expiryOf(token) {
      return fresh(introspectionCacheKey(token))?.until;
    },
    get size() {
      return entries.size;
    },
  };
}
