import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

// Issue 7 "Security headers": nosniff on every answer; HSTS in production (the gateway is
// served over HTTPS there); on every /v1/auth answer no-store and no referrer (codes and
// states travel in those URLs; the callback sets it as well, spec 4.2).

const HSTS = 'max-age=31536000; includeSubDomains';

const NOSNIFF: [string, string] = ['X-Content-Type-Options', 'nosniff'];
const STRICT_TRANSPORT: [string, string] = ['Strict-Transport-Security', HSTS];
const AUTH_ANSWER: [string, string][] = [
  ['Cache-Control', 'no-store'],
  ['Referrer-Policy', 'no-referrer'],
];
// The four possible sets, made once: answers take one without allocating.
const PAIRS = {
  plain: [NOSNIFF],
  production: [NOSNIFF, STRICT_TRANSPORT],
  auth: [NOSNIFF, ...AUTH_ANSWER],
  productionAuth: [NOSNIFF, STRICT_TRANSPORT, ...AUTH_ANSWER],
} as const satisfies Record<string, readonly (readonly [string, string])[]>;

/** One of the four sets of security headers, as name/value pairs (the same object each time). */
export type SecurityHeaderSet = readonly (readonly [string, string])[];

/** The security headers of an answer to `path` (without its query). */
export function securityHeaderPairs(path: string, production: boolean): SecurityHeaderSet {
  if (path.startsWith('/v1/auth/')) return production ? PAIRS.productionAuth : PAIRS.auth;
  return production ? PAIRS.production : PAIRS.plain;
}

/** The security headers of an answer to `path` (without its query). */
export function setSecurityHeaders(res: ServerResponse, path: string, production: boolean): void {
  for (const [name, value] of securityHeaderPairs(path, production)) res.setHeader(name, value);
}

export function createSecurityHeaders(options: { production: boolean }): RequestHandler {
  return function setSecurityHeadersOf(req, res, next) {
    setSecurityHeaders(res, req.path, options.production);
    next();
  };
}
