import type { RequestHandler } from 'express';

// Issue 7 "Security headers": nosniff on every answer; HSTS in production (the gateway is
// served over HTTPS there); on every /v1/auth answer no-store and no referrer (codes and
// states travel in those URLs; the callback sets it as well, spec 4.2).

const HSTS = 'max-age=31536000; includeSubDomains';

export function createSecurityHeaders(options: { production: boolean }): RequestHandler {
  return function setSecurityHeaders(req, res, next) {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (options.production) res.setHeader('Strict-Transport-Security', HSTS);
    if (req.path.startsWith('/v1/auth/')) {
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Referrer-Policy', 'no-referrer');
    }
    next();
  };
}
