import type { Request } from 'express';
import { createHash } from 'node:crypto';
import { deleteCookie, randomCookieValue, readCookie, serializeCookie } from '../cookies.js';
import type { ExchangeResult } from '../gateway-types.js';
import type { SessionStore } from './session-store.js';

// The platform's own session (spec 1, step 5): a random id in an HttpOnly SameSite=Lax
// cookie, the exchange body kept server-side under the id's hash until the gateway session
// expires. The gatewayToken never leaves the server.

export type PlatformSessionCookie = { name: string; secure: boolean };

export type CurrentSession = {
  /** The store key: SHA-256 of the cookie value. */
  key: string;
  result: ExchangeResult;
};

export type PlatformSessions = {
  /** Stores a new session; answers the Set-Cookie value carrying its id. */
  begin(result: ExchangeResult): Promise<string>;
  /** The session the request's cookie names, unless unknown or expired. */
  current(req: Request): Promise<CurrentSession | undefined>;
  /** The store key of the request's cookie, whether or not the session still exists. */
  keyOf(req: Request): string | undefined;
  /** Deletes the session from the store. */
  end(key: string): Promise<void>;
  /** The Set-Cookie value that deletes the session cookie. */
  clearCookie(): string;
};

const PATH = '/';

export function sessionStoreKey(cookieValue: string): string {
  return createHash('sha256').update(cookieValue, 'utf8').digest('base64url');
}

export function createPlatformSessions(
  store: SessionStore,
  cookie: PlatformSessionCookie,
  now: () => number = Date.now,
): PlatformSessions {
  const keyOf = (req: Request): string | undefined => {
    const value = readCookie(req.headers.cookie, cookie.name);
    return value === undefined || value === '' ? undefined : sessionStoreKey(value);
  };
  return {
    async begin(result) {
      const id = randomCookieValue();
      const expiresAt = new Date(result.session.expiresAt);
      await store.set(sessionStoreKey(id), result, expiresAt);
      return serializeCookie(cookie.name, id, {
        path: PATH,
        secure: cookie.secure,
        maxAgeSeconds: (expiresAt.getTime() - now()) / 1000,
      });
    },
    keyOf,
    async current(req) {
      const key = keyOf(req);
      if (key === undefined) return undefined;
      const result = await store.get(key);
      if (result === undefined) return undefined;
      // Whatever the store does, a session past the gateway session's expiry is over.
      if (!(Date.parse(result.session.expiresAt) > now())) {
        await store.delete(key);
        return undefined;
      }
      return { key, result };
    },
    async end(key) {
      await store.delete(key);
    },
    clearCookie: () => deleteCookie(cookie.name, { path: PATH, secure: cookie.secure }),
  };
}
