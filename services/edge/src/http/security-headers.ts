import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

// Issue 7 "Security headers": nosniff on every answer; HSTS in production (the gateway is
// served over HTTPS there); on every /v1/auth answer no-store and no referrer (codes and
// states travel in those URLs; the callback sets it as well, spec 4.2).

export const HSTS = 'max-age=31536000; includeSubDomains';

/** The security headers of an answer to `path` (without its query). */
export function setSecurityHeaders(res: ServerResponse, path: string, production: boolean): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (production) res.setHeader('Strict-Transport-Security', HSTS);
  if (path.startsWith('/v1/auth/')) {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
  }
}

export function createSecurityHeaders(options: { production: boolean }): RequestHandler {
  return function setSecurityHeadersOf(req, res, next) {
    setSecurityHeaders(res, req.path, options.production);
    next();
  };
}
