import { isIP } from 'node:net';
// Plain checks behind the environment schema. Each returns the problem as a rule text that
// can be shown next to the variable name; none of them ever puts the checked value in it.

export type Checked<T> = { ok: true; value: T } | { ok: false; rule: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const broken = (rule: string): Checked<never> => ({ ok: false, rule });

export const HTTP_URL_RULE = 'must be an absolute http:// or https:// URL';

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

function isHttp(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

// The URL parser drops tabs and newlines and accepts `https://@host`, so the raw text is
// checked as well when a value is kept exactly as written.
function hasCredentials(raw: string, url: URL): boolean {
  const authority = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/, 1)[0] ?? '';
  return url.username !== '' || url.password !== '' || authority.includes('@');
}

/** An absolute http(s) URL, kept as written. */
export function checkHttpUrl(raw: string): Checked<string> {
  const url = parseUrl(raw);
  return url !== undefined && isHttp(url) && !/\s/.test(raw) ? ok(raw) : broken(HTTP_URL_RULE);
}

/** A URL whose scheme is one of `protocols` (given with the trailing colon). */
export function checkUrlWithScheme(
  raw: string,
  protocols: readonly string[],
  rule: string,
): Checked<string> {
  const url = parseUrl(raw);
  return url !== undefined && protocols.includes(url.protocol) ? ok(raw) : broken(rule);
}

/** The hosts on which the spec allows http: localhost, 127.0.0.1, [::1] and *.localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host === '127.0.0.1' ||
    host === '[::1]' ||
    (host.endsWith('.localhost') && host.length > '.localhost'.length)
  );
}

/**
 * The deployment issuer: https, or http for loopback hosts only; no query, fragment or
 * credentials. Kept exactly as written except that a trailing `/` is removed.
 */
export function checkIssuer(raw: string): Checked<string> {
  const url = parseUrl(raw);
  if (url === undefined || !isHttp(url) || /\s/.test(raw)) return broken(HTTP_URL_RULE);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return broken(
      'must use https (http is allowed only for localhost, 127.0.0.1, [::1] and *.localhost)',
    );
  }
  if (raw.includes('?') || raw.includes('#')) return broken('must not contain a query or fragment');
  if (hasCredentials(raw, url)) return broken('must not contain a username or password');
  return ok(raw.replace(/\/+$/, ''));
}

export const CALLBACK_PATH = '/v1/auth/callback';

/** AUTH_CALLBACK_URL: `{base_url}/v1/auth/callback`, kept as written (identity providers compare it exactly). */
export function checkCallbackUrl(raw: string): Checked<string> {
  const url = parseUrl(raw);
  if (url === undefined || !isHttp(url) || /\s/.test(raw)) return broken(HTTP_URL_RULE);
  if (raw.includes('?') || raw.includes('#')) return broken('must not contain a query or fragment');
  if (hasCredentials(raw, url)) return broken('must not contain a username or password');
  if (!url.pathname.endsWith(CALLBACK_PATH) || !raw.endsWith(CALLBACK_PATH)) {
    return broken(`must be {base_url}${CALLBACK_PATH} (its path must end with ${CALLBACK_PATH})`);
  }
  return ok(raw);
}

/** The base URL of the gateway: the callback URL without `/v1/auth/callback`, no trailing `/`. */
export function baseUrlOfCallback(callbackUrl: string): string {
  return callbackUrl.slice(0, -CALLBACK_PATH.length).replace(/\/+$/, '');
}

/** An integer written in decimal digits, within [min, max]. */
export function checkInteger(raw: string, min: number, max: number): Checked<number> {
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  return value >= min && value <= max
    ? ok(value)
    : broken(`must be an integer from ${min} to ${max}`);
}

export function checkMinLength(raw: string, min: number): Checked<string> {
  return raw.length >= min ? ok(raw) : broken(`must be at least ${min} characters`);
}

/** Comma-separated list items, trimmed, empty items dropped. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/;

/** Comma-separated e-mail addresses, lower-cased, without duplicates. */
export function checkEmailList(raw: string): Checked<string[]> {
  const emails = splitList(raw).map((item) => item.toLowerCase());
  const bad = emails.findIndex((email) => !EMAIL_PATTERN.test(email));
  if (bad >= 0) {
    return broken(
      `must be a comma-separated list of e-mail addresses (entry ${bad + 1} is not an e-mail address)`,
    );
  }
  return ok([...new Set(emails)]);
}

function originProblem(item: string): string | undefined {
  const url = parseUrl(item);
  if (url === undefined || !isHttp(url) || /\s/.test(item)) return 'is not an http(s) URL';
  if (hasCredentials(item, url)) return 'has a username or password';
  if (item.includes('?') || item.includes('#')) return 'has a query or fragment';
  if (url.pathname !== '/') return 'has a path';
  return undefined;
}

/** Comma-separated http(s) origins, each stored as `new URL(x).origin`, without duplicates. */
export function checkOriginList(raw: string): Checked<string[]> {
  const items = splitList(raw);
  for (const [index, item] of items.entries()) {
    const problem = originProblem(item);
    if (problem !== undefined) {
      return broken(
        `must be a comma-separated list of http(s) origins like https://app.example.com ` +
          `(entry ${index + 1} ${problem})`,
      );
    }
  }
  return ok([...new Set(items.map((item) => new URL(item).origin))]);
}

const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_RULE =
  'must be "<id>:<key>[,<id>:<key>...]" with ids matching ^[A-Za-z0-9_-]{1,32}$ and each key ' +
  '32 random bytes in base64url';

/**
 * The keyring spec read by @gateway/crypto parseEncryptionKeys, validated with the same rules
 * (kept here so configuration does not depend on the crypto package). Returns the text as given.
 */
export function checkEncryptionKeySpec(raw: string): Checked<string> {
  const entries = splitList(raw);
  if (entries.length === 0) return broken(`${KEY_RULE} (no keys given)`);
  const ids = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const position = index + 1;
    const separator = entry.indexOf(':');
    const id = separator < 0 ? '' : entry.slice(0, separator).trim();
    const key = entry
      .slice(separator + 1)
      .trim()
      .replace(/=+$/, '');
    if (separator < 0 || !KEY_ID_PATTERN.test(id)) {
      return broken(`${KEY_RULE} (entry ${position} has no valid id)`);
    }
    const bytes = Buffer.from(key, 'base64url');
    if (!/^[A-Za-z0-9_-]*$/.test(key) || bytes.toString('base64url') !== key) {
      return broken(`${KEY_RULE} (entry ${position} is not base64url)`);
    }
    if (bytes.length !== 32) {
      return broken(`${KEY_RULE} (entry ${position} has ${bytes.length} bytes, not 32)`);
    }
    if (ids.has(id)) return broken(`${KEY_RULE} (entry ${position} repeats an earlier id)`);
    ids.add(id);
  }
  return ok(raw);
}

const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal'];

/** One address or CIDR block: `10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`. */
function isAddressOrBlock(item: string): boolean {
  const [address, bits, extra] = item.split('/');
  if (extra !== undefined || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-* headers are believed, as
 * addresses, CIDR blocks or the keywords loopback, linklocal and uniquelocal.
 */
export function checkProxyList(raw: string): Checked<string[]> {
  const items = splitList(raw);
  for (const [index, item] of items.entries()) {
    if (!PROXY_KEYWORDS.includes(item) && !isAddressOrBlock(item)) {
      return broken(
        'must be a comma-separated list of IP addresses, CIDR blocks or the keywords ' +
          `loopback, linklocal, uniquelocal (entry ${index + 1} is not one)`,
      );
    }
  }
  return ok([...new Set(items)]);
}
