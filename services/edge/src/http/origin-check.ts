import type { RequestHandler, Response } from 'express';
import { GatewayError } from '@gateway/errors';

/**
 * The cookie-write rule of gatewayCookieAuth (spec 5): a write authenticated by the session
 * cookie needs an `Origin` header on the allowlist (the CORS allowlist of spec 2.15),
 * otherwise 403 FORBIDDEN. A missing Origin is refused as well: browsers send one on every
 * cross-site and same-origin POST, so only a non-browser client lacks it, and such a client
 * has no reason to present a browser's cookie.
 *
 * The check comes first, before the body is read and before any service call, so a refused
 * request changes nothing.
 */
export function requireAllowedOrigin(
  isAllowedOrigin: (origin: string) => Promise<boolean>,
): RequestHandler {
  return async function checkCookieWriteOrigin(req, res, next) {
    try {
      res.locals.allowedOrigin = await assertAllowedOrigin(req.headers.origin, isAllowedOrigin);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The rule itself: the Origin when allowlisted, otherwise 403 FORBIDDEN. */
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

/** Whether `requireAllowedOrigin` accepted this request's Origin. */
export function hasAllowedOrigin(res: Response): boolean {
  return typeof res.locals.allowedOrigin === 'string';
}
