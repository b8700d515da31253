import type { IncomingMessage } from 'node:http';
import { GatewayError } from '@gateway/errors';
import type { OperationAuth } from './operation.js';
import { readSessionToken } from './session-cookie.js';

/**
 * The cookie-write rule of gatewayCookieAuth (spec 5): a write authenticated by the session
 * cookie needs an `Origin` header on the allowlist (the CORS allowlist of spec 2.15),
 * otherwise 403 FORBIDDEN. A missing Origin is refused as well: browsers send one on every
 * cross-site and same-origin POST, so only a non-browser client lacks it, and such a client
 * has no reason to present a browser's cookie.
 *
 * The check comes before the body is read and before any service call, so a refused request
 * changes nothing.
 */
export async function assertAllowedOrigin(
  origin: string | undefined,
  isAllowedOrigin: (origin: string) => Promise<boolean>,
): Promise<string> {
  if (origin === undefined || origin === '') {
    throw new GatewayError('FORBIDDEN', 'A cookie-authenticated write needs an Origin header.');
  }
  if (!(await isAllowedOrigin(origin))) {
    throw new GatewayError('FORBIDDEN', 'The Origin of this request is not allowed.');
  }
  return origin;
}

/** Reads (GET, HEAD) need no Origin; every other cookie-authenticated method does. */
export const isCookieWrite = (method: string): boolean => method !== 'GET' && method !== 'HEAD';

const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i;

/**
 * Whether `req` is a cookie write of an operation that takes the cookie: a cookie operation
 * (logout) always, a user or admin operation when no Bearer token is presented and the
 * session cookie is (a Bearer header wins over the cookie).
 */
export function isCookieWriteOf(auth: OperationAuth, req: IncomingMessage): boolean {
  if (!isCookieWrite(req.method ?? 'GET')) return false;
  if (auth.kind === 'cookie') return true;
  if (auth.kind === 'public' || auth.kind === 'platform') return false;
  const authorization = req.headers.authorization;
  if (authorization !== undefined && BEARER_SCHEME.test(authorization)) return false;
  return readSessionToken(req) !== undefined;
}
