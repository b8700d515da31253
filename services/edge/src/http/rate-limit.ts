import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Router } from 'express';
import { GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import type { RateLimitStore } from './rate-limit-store.js';

// Issue 7 "Limits" (the spec leaves rate limits open; docs/decisions.md): per client IP on
// the browser endpoints (start, callback), per presented platform credential and per IP on
// the server endpoints (exchange, introspect). Over the limit: 429 RATE_LIMITED with the
// error body and Retry-After. The counters fail open: when the store does not answer within
// its deadline the request goes on (the limits protect capacity; they never decide whether
// a credential, session or code is accepted) and the failure is logged.

export type RateLimitSettings = {
  windowSeconds: number;
  browserPerIp: number;
  exchangePerClient: number;
  introspectPerClient: number;
  serverPerIp: number;
};

type Rule = {
  name: string;
  limit: number;
  /** The counter's key for this request, or undefined when the rule does not apply. */
  keyOf(req: Request): string | undefined;
};

const STORE_DEADLINE_MS = 250;

const ipOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * The presented credential, hashed: a caller without the secret counts against its own
 * bucket (and its address's), never against the platform's real key.
 */
function credentialOf(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === '') return undefined;
  return createHash('sha256').update(header).digest('base64url').slice(0, 32);
}

function limiter(
  rules: readonly Rule[],
  settings: RateLimitSettings,
  store: RateLimitStore,
  logger: Logger,
): RequestHandler {
  const active = rules.filter((rule) => rule.limit > 0);
  const windowMs = settings.windowSeconds * 1000;
  return async function limitRate(req, res, next) {
    if (active.length === 0) {
      next();
      return;
    }
    try {
      const applicable = active.flatMap((rule) => {
        const key = rule.keyOf(req);
        return key === undefined ? [] : [{ rule, key: `${rule.name}:${key}` }];
      });
      const hits = await Promise.race([
        store.hit(
          applicable.map((entry) => entry.key),
          windowMs,
        ),
        new Promise<'late'>((resolve) => setTimeout(resolve, STORE_DEADLINE_MS, 'late').unref()),
      ]);
      if (hits === 'late') {
        logger.warn({ path: req.path }, 'rate limit store too slow; request let through');
        next();
        return;
      }
      const over = applicable.flatMap((entry, index) => {
        const hit = hits[index];
        return hit !== undefined && hit.count > entry.rule.limit ? [hit] : [];
      });
      if (over.length === 0) {
        next();
        return;
      }
      const waitMs = Math.max(...over.map((hit) => hit.resetMs));
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(waitMs / 1000))));
      next(new GatewayError('RATE_LIMITED', 'Too many requests; try again later.'));
    } catch (error) {
      logger.warn({ err: error, path: req.path }, 'rate limit store failed; request let through');
      next();
    }
  };
}

/** Puts the limiters in front of the four limited operations (registered before them). */
export function registerRateLimits(
  router: Router,
  options: { settings: RateLimitSettings; store: RateLimitStore; logger: Logger },
): void {
  const { settings, store, logger } = options;
  const perIp = (name: string, limit: number): Rule => ({ name, limit, keyOf: ipOf });
  const perCredential = (name: string, limit: number): Rule => ({
    name,
    limit,
    keyOf: credentialOf,
  });
  const browser = limiter([perIp('browser-ip', settings.browserPerIp)], settings, store, logger);
  router.get('/v1/auth/start', browser);
  router.get('/v1/auth/callback', browser);
  router.post(
    '/v1/auth/exchange',
    limiter(
      [
        perCredential('exchange-client', settings.exchangePerClient),
        perIp('server-ip', settings.serverPerIp),
      ],
      settings,
      store,
      logger,
    ),
  );
  router.post(
    '/v1/auth/introspect',
    limiter(
      [
        perCredential('introspect-client', settings.introspectPerClient),
        perIp('server-ip', settings.serverPerIp),
      ],
      settings,
      store,
      logger,
    ),
  );
}
