import { randomBytes } from 'node:crypto';

// Building `Set-Cookie` values and reading `Cookie` headers (RFC 6265), for the SDK's two
// cookies on the platform's own domain: the login-pending cookie (login-CSRF protection,
// spec 4.4) and the platform session cookie of the Express middleware. Both are HttpOnly and
// SameSite=Lax: the gateway's redirect back to the platform callback is a top-level
// navigation, which Lax lets through, while cross-site subrequests and POSTs carry neither.

export type CookieAttributes = {
  /** Seconds until the browser drops the cookie; 0 deletes it at once. */
  maxAgeSeconds: number;
  path: string;
  secure: boolean;
};

// RFC 6265 section 4.1.1: a cookie name is an RFC 7230 token, a value is cookie-octets.
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;
// A path attribute value: any CHAR except CTLs and `;`.
const COOKIE_PATH = /^\/[\x20-\x3A\x3C-\x7E]*$/;

export function isCookieName(name: string): boolean {
  return COOKIE_NAME.test(name);
}

export function isCookiePath(path: string): boolean {
  return COOKIE_PATH.test(path);
}

/** `name=value; Max-Age=…; Path=…; HttpOnly; SameSite=Lax[; Secure]`. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  if (!isCookieName(name)) throw new TypeError(`Invalid cookie name ${JSON.stringify(name)}`);
  if (!COOKIE_VALUE.test(value)) throw new TypeError(`Invalid value for cookie ${name}`);
  if (!isCookiePath(attributes.path)) {
    throw new TypeError(`Invalid path for cookie ${name}: ${attributes.path}`);
  }
  const maxAge = Math.max(0, Math.floor(attributes.maxAgeSeconds));
  const parts = [`${name}=${value}`, `Max-Age=${maxAge}`, `Path=${attributes.path}`];
  parts.push('HttpOnly', 'SameSite=Lax');
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The Set-Cookie value that deletes the cookie set with the same name and path. */
export function deleteCookie(name: string, attributes: Omit<CookieAttributes, 'maxAgeSeconds'>) {
  return serializeCookie(name, '', { ...attributes, maxAgeSeconds: 0 });
}

/**
 * The value of the first cookie called `name` in a `Cookie` header, without optional
 * surrounding double quotes, not decoded. Undefined when absent. A cookie set for a more
 * specific path is sent first (RFC 6265 section 5.4), so the first one wins.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0 || pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1)
      : value;
  }
  return undefined;
}

/** 256 random bits, base64url: the value of a pending cookie or a platform session id. */
export function randomCookieValue(): string {
  return randomBytes(32).toString('base64url');
}
