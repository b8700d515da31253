import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { Logger } from '@gateway/telemetry';

export type Cors = {
  /**
   * Credentialed CORS for a request to `/v1` (spec 5): marks the answer for an allowed
   * `Origin`; answers a preflight itself (204) and then returns 'answered'.
   */
  apply(req: IncomingMessage, res: ServerResponse): Promise<'answered' | 'continue'>;
  /**
   * Whether `origin` (an `Origin` header value) is on the allowlist. The cookie-write
   * Origin check of gatewayCookieAuth (spec 5) uses the same list.
   */
  isAllowedOrigin(origin: string): Promise<boolean>;
  /** Drops the cached registry origins; the next request reads them again. */
  invalidate(): void;
};

export const CORS_ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
export const CORS_ALLOWED_HEADERS = 'Content-Type, Authorization';
export const CORS_MAX_AGE_SECONDS = '600';

/** The serialised origin of `value`, or undefined when it is not an http(s) origin. */
function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The CORS allowlist of spec 2.15: CORS_ORIGINS, the origin of IDENTITY_ISSUER, and what the
 * registry reports (issuer origins of active environments, return-URL origins of active
 * platforms). The registry part is cached for `ttlMs` and dropped by `invalidate()`, which
 * the admin routes call after each change they make, so this instance sees its own writes at
 * once and other instances' within the TTL. When the registry cannot be asked, only the
 * configured origins are allowed (fail closed) and nothing is cached.
 *
 * An allowed origin is echoed exactly with credentials allowed, never `*` (spec 5); a
 * disallowed one gets no CORS headers at all, so the browser withholds the response.
 */
export function createCors(options: {
  corsOrigins: readonly string[];
  identityIssuer: string;
  registry: Client<typeof RegistryService>;
  logger: Logger;
  ttlMs?: number;
  now?: () => number;
}): Cors {
  const configured = configuredOrigins(options.corsOrigins, options.identityIssuer);
  const registryOrigins = cachedRegistryOrigins(options);

  async function isAllowedOrigin(origin: string): Promise<boolean> {
    // Only a serialised origin (scheme://host[:port]) matches; "null", paths or a trailing
    // `/` never do.
    if (originOf(origin) !== origin) return false;
    if (configured.has(origin)) return true;
    return (await registryOrigins.read()).has(origin);
  }

  return {
    apply: (req, res) => answerCors(req, res, isAllowedOrigin),
    isAllowedOrigin,
    invalidate: () => registryOrigins.invalidate(),
  };
}

/** The origins allowed by configuration: CORS_ORIGINS and the origin of IDENTITY_ISSUER. */
function configuredOrigins(
  corsOrigins: readonly string[],
  identityIssuer: string,
): ReadonlySet<string> {
  const configured = new Set<string>();
  for (const value of [...corsOrigins, identityIssuer]) {
    const origin = originOf(value);
    if (origin !== undefined) configured.add(origin);
  }
  return configured;
}

/**
 * The registry's origins, cached for `ttlMs`; concurrent readers share one request. A failed
 * read allows no registry origin and is not cached.
 */
function cachedRegistryOrigins(options: {
  registry: Client<typeof RegistryService>;
  logger: Logger;
  ttlMs?: number;
  now?: () => number;
}): { read(): Promise<ReadonlySet<string>>; invalidate(): void } {
  const ttlMs = options.ttlMs ?? 30_000;
  const now = options.now ?? Date.now;
  let cached: { origins: ReadonlySet<string>; expiresAt: number } | undefined;
  let pending: Promise<ReadonlySet<string>> | undefined;
  // Bumped by invalidate(), so a refresh that started before a write is not kept as fresh.
  let generation = 0;

  async function fetchRegistryOrigins(): Promise<ReadonlySet<string>> {
    const startedIn = generation;
    try {
      const answer = await options.registry.getCorsOrigins({});
      const origins = new Set<string>();
      for (const value of answer.origins) {
        const origin = originOf(value);
        if (origin !== undefined) origins.add(origin);
      }
      if (startedIn === generation) cached = { origins, expiresAt: now() + ttlMs };
      return origins;
    } catch (error) {
      options.logger.warn({ err: error }, 'CORS origins could not be read from the registry');
      return new Set<string>();
    } finally {
      if (startedIn === generation) pending = undefined;
    }
  }

  return {
    read() {
      if (cached !== undefined && cached.expiresAt > now()) return Promise.resolve(cached.origins);
      pending ??= fetchRegistryOrigins();
      return pending;
    },
    invalidate() {
      generation += 1;
      cached = undefined;
      pending = undefined;
    },
  };
}

/**
 * Marks the answer for an allowed `Origin` and answers a preflight itself (204); a disallowed
 * origin gets no CORS headers.
 */
async function answerCors(
  req: IncomingMessage,
  res: ServerResponse,
  isAllowedOrigin: (origin: string) => Promise<boolean>,
): Promise<'answered' | 'continue'> {
  const origin = req.headers.origin;
  if (origin === undefined) return 'continue';
  varyByOrigin(res);
  const allowed = await isAllowedOrigin(origin);
  if (allowed) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  }
  const preflight =
    req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (!preflight) return 'continue';
  if (allowed) {
    res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
    res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', CORS_MAX_AGE_SECONDS);
  }
  res.statusCode = 204;
  res.end();
  return 'answered';
}

/** Whether a request path is under `/v1`, where credentialed CORS applies (not health, docs). */
export function isCorsPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

function varyByOrigin(res: ServerResponse): void {
  const vary = res.getHeader('Vary');
  const current = vary === undefined ? '' : String(vary);
  if (!/(?:^|,)\s*origin\s*(?:,|$)/i.test(current)) {
    res.setHeader('Vary', current === '' ? 'Origin' : `${current}, Origin`);
  }
}
