import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import type { RateLimitStore } from './rate-limit-store.js';

// The edge's rate limits (the spec leaves them open; docs/decisions.md): per client IP on
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
  keyOf(req: IncomingMessage, ip: string): string | undefined;
};

const STORE_DEADLINE_MS = 250;

/**
 * The presented credential, hashed: a caller without the secret counts against its own
 * bucket (and its address's), never against the platform's real key.
 */
function credentialOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === '') return undefined;
  return createHash('sha256').update(header).digest('base64url').slice(0, 32);
}

/** The rule sets an operation may declare (operation.ts `rateLimit`). */
export type LimitedOperation = 'browser' | 'exchange' | 'introspect';

export type RateLimiter = {
  /**
   * Counts the request; throws a RateLimitedError (429 RATE_LIMITED, Retry-After) when a
   * limit is exceeded. `ip` is the client address (after trusted proxies).
   */
  check(operation: LimitedOperation, req: IncomingMessage, ip: string): Promise<void>;
};

/** Thrown over a limit; the answer carries `Retry-After`. */
export class RateLimitedError extends GatewayError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', 'Too many requests; try again later.', { retryAfterSeconds });
  }
}

export function createRateLimiter(options: {
  settings: RateLimitSettings;
  store: RateLimitStore;
  logger: Logger;
}): RateLimiter {
  const { settings, store, logger } = options;
  const windowMs = settings.windowSeconds * 1000;
  const perIp = (name: string, limit: number): Rule => ({ name, limit, keyOf: (_req, ip) => ip });
  const perCredential = (name: string, limit: number): Rule => ({
    name,
    limit,
    keyOf: credentialOf,
  });
  const rules: Record<LimitedOperation, Rule[]> = {
    browser: [perIp('browser-ip', settings.browserPerIp)],
    exchange: [
      perCredential('exchange-client', settings.exchangePerClient),
      perIp('server-ip', settings.serverPerIp),
    ],
    introspect: [
      perCredential('introspect-client', settings.introspectPerClient),
      perIp('server-ip', settings.serverPerIp),
    ],
  };
  for (const name of Object.keys(rules) as LimitedOperation[]) {
    rules[name] = rules[name].filter((rule) => rule.limit > 0);
  }
  return {
    async check(operation, req, ip) {
      const active = rules[operation];
      if (active.length === 0) return;
      let hits: Awaited<ReturnType<RateLimitStore['hit']>> | 'late';
      const applicable = active.flatMap((rule) => {
        const key = rule.keyOf(req, ip);
        return key === undefined ? [] : [{ rule, key: `${rule.name}:${key}` }];
      });
      try {
        hits = await Promise.race([
          store.hit(
            applicable.map((entry) => entry.key),
            windowMs,
          ),
          new Promise<'late'>((resolve) => setTimeout(resolve, STORE_DEADLINE_MS, 'late').unref()),
        ]);
      } catch (error) {
        logger.warn({ err: error, operation }, 'rate limit store failed; request let through');
        return;
      }
      if (hits === 'late') {
        logger.warn({ operation }, 'rate limit store too slow; request let through');
        return;
      }
      const over = applicable.flatMap((entry, index) => {
        const hit = hits[index];
        return hit !== undefined && hit.count > entry.rule.limit ? [hit] : [];
      });
      if (over.length === 0) return;
      const waitMs = Math.max(...over.map((hit) => hit.resetMs));
      throw new RateLimitedError(Math.max(1, Math.ceil(waitMs / 1000)));
    },
  };
}
