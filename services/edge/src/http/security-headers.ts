import type { ServerResponse } from 'node:http';

// Every security header of the edge: nosniff on every answer; HSTS in production (the gateway
// is served over HTTPS there); no referrer from any /v1/auth answer, whose URLs carry codes,
// states and transaction ids (the callback's, spec 4.2). Cache rules live in cache-policy.ts.

const HSTS = 'max-age=31536000; includeSubDomains';

const NOSNIFF: [string, string] = ['X-Content-Type-Options', 'nosniff'];
const STRICT_TRANSPORT: [string, string] = ['Strict-Transport-Security', HSTS];
const NO_REFERRER: [string, string] = ['Referrer-Policy', 'no-referrer'];
// The four possible sets, made once: answers take one without allocating.
const PAIRS = {
  plain: [NOSNIFF],
  production: [NOSNIFF, STRICT_TRANSPORT],
  auth: [NOSNIFF, NO_REFERRER],
  productionAuth: [NOSNIFF, STRICT_TRANSPORT, NO_REFERRER],
} as const satisfies Record<string, readonly (readonly [string, string])[]>;

/** The security headers of an answer to `path` (without its query), as name-value pairs. */
export function securityHeaderPairs(
  path: string,
  production: boolean,
): readonly (readonly [string, string])[] {
  const auth = path.startsWith('/v1/auth/');
  if (production) return auth ? PAIRS.productionAuth : PAIRS.production;
  return auth ? PAIRS.auth : PAIRS.plain;
}

/** Sets the security headers of an answer to `path` (without its query). */
export function setSecurityHeaders(res: ServerResponse, path: string, production: boolean): void {
  for (const [name, value] of securityHeaderPairs(path, production)) res.setHeader(name, value);
}

/** What the avatar image adds: it may be embedded anywhere, and never runs as a document. */
export function setStoredImageHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}
