import { isCookieName, isCookiePath } from './cookies.js';
import { GatewayPlatformError } from './errors.js';

/** A platform credential (spec 2.3): `clientId` and the `clientSecret` shown once on issue. */
export type PlatformKey = { clientId: string; clientSecret: string };

export type PendingCookieOptions = {
  /** Default `gw_login_pending`. */
  name?: string;
  /** Default: true when gatewayUrl is https. */
  secure?: boolean;
  /** Default 600 (10 minutes, the lifetime of the gateway's login transaction). */
  maxAgeSeconds?: number;
  /** Default `/`. Must cover the callback path. */
  path?: string;
};

export type GatewayPlatformOptions = {
  /** The gateway's public origin, e.g. `http://localhost:8080`. */
  gatewayUrl: string;
  /** The platform key, `^[A-Z][A-Z0-9_]{1,63}$` (spec 8). */
  platformKey: string;
  /** The BFF key of this app's redirect pair: redeems the codes sent to its callback. */
  bffKey: PlatformKey;
  /** The platform's backend key; used for introspect when given (else the BFF key). */
  backendKey?: PlatformKey;
  /** The environment key the exchange must answer, e.g. `PROD` (spec 4.4). */
  expectedEnvironment: string;
  pendingCookie?: PendingCookieOptions;
  /**
   * How long an `active: true` introspection is reused: 30 to 60 seconds, default 45; or 0,
   * no cache: every check asks the gateway, so a session ended elsewhere (a single logout at
   * the identity provider, an admin's revocation) is seen on the next one.
   */
  introspectCacheSeconds?: number;
  /** Time-out of every gateway call in milliseconds, default 5000. */
  timeoutMs?: number;
  /** The fetch to call the gateway with; default the global fetch. */
  fetch?: typeof fetch;
};

/** The options after validation and defaults. */
export type PlatformSettings = {
  /** The gateway origin, without a trailing slash. */
  gatewayUrl: string;
  platformKey: string;
  bffKey: PlatformKey;
  introspectionKey: PlatformKey;
  expectedEnvironment: string;
  pendingCookie: { name: string; secure: boolean; maxAgeSeconds: number; path: string };
  introspectCacheSeconds: number;
  timeoutMs: number;
  fetch: typeof fetch;
};

const PLATFORM_KEY = /^[A-Z][A-Z0-9_]{1,63}$/;
const ENVIRONMENT_KEY = /^[A-Z][A-Z0-9_]{1,31}$/;

function invalid(setting: string, rule: string): never {
  throw new GatewayPlatformError('INVALID_OPTIONS', `createGatewayPlatform: ${setting} ${rule}`);
}

function integerIn(setting: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    invalid(setting, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function checkGatewayUrl(value: unknown): string {
  if (typeof value !== 'string') return invalid('gatewayUrl', 'must be a string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid('gatewayUrl', `must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    invalid('gatewayUrl', 'must be an http(s) URL');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    invalid('gatewayUrl', 'must not carry credentials, a query or a fragment');
  }
  return url.href.replace(/\/+$/, '');
}

function checkKey(setting: string, key: PlatformKey | undefined): PlatformKey {
  if (typeof key !== 'object' || key === null) return invalid(setting, 'is required');
  if (typeof key.clientId !== 'string' || key.clientId === '' || key.clientId.includes(':')) {
    invalid(`${setting}.clientId`, 'must be a non-empty string without ":"');
  }
  if (typeof key.clientSecret !== 'string' || key.clientSecret === '') {
    invalid(`${setting}.clientSecret`, 'must be a non-empty string');
  }
  return { clientId: key.clientId, clientSecret: key.clientSecret };
}

/** Validates the options once, at construction, naming the bad setting. */
export function resolvePlatformSettings(options: GatewayPlatformOptions): PlatformSettings {
  const gatewayUrl = checkGatewayUrl(options.gatewayUrl);
  if (typeof options.platformKey !== 'string' || !PLATFORM_KEY.test(options.platformKey)) {
    invalid('platformKey', 'must match ^[A-Z][A-Z0-9_]{1,63}$');
  }
  if (
    typeof options.expectedEnvironment !== 'string' ||
    !ENVIRONMENT_KEY.test(options.expectedEnvironment)
  ) {
    invalid('expectedEnvironment', 'must be an environment key matching ^[A-Z][A-Z0-9_]{1,31}$');
  }
  const bffKey = checkKey('bffKey', options.bffKey);
  const backendKey =
    options.backendKey === undefined ? undefined : checkKey('backendKey', options.backendKey);

  const pending = options.pendingCookie ?? {};
  const name = pending.name ?? 'gw_login_pending';
  if (!isCookieName(name)) invalid('pendingCookie.name', 'must be a cookie name (RFC 6265)');
  const path = pending.path ?? '/';
  if (!isCookiePath(path)) invalid('pendingCookie.path', 'must be a path starting with /');
  const maxAgeSeconds = integerIn(
    'pendingCookie.maxAgeSeconds',
    pending.maxAgeSeconds ?? 600,
    60,
    3600,
  );

  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') invalid('fetch', 'must be a function (Node 20 has one)');

  return {
    gatewayUrl,
    platformKey: options.platformKey,
    bffKey,
    introspectionKey: backendKey ?? bffKey,
    expectedEnvironment: options.expectedEnvironment,
    pendingCookie: {
      name,
      path,
      maxAgeSeconds,
      secure: pending.secure ?? gatewayUrl.startsWith('https:'),
    },
    // Spec 4.5, 8: at most 30 to 60 s; 0 caches nothing.
    introspectCacheSeconds:
      options.introspectCacheSeconds === 0
        ? 0
        : integerIn('introspectCacheSeconds', options.introspectCacheSeconds ?? 45, 30, 60),
    timeoutMs: integerIn('timeoutMs', options.timeoutMs ?? 5000, 1, 60_000),
    fetch: fetchImpl,
  };
}
