import { createHash, timingSafeEqual } from 'node:crypto';

// Binding a callback to the browser that started its login. A handoff code is single use, but
// until the platform's callback has exchanged it, whoever holds a leaked callback URL (browser
// history, an access log) can send it to the callback first. The gateway carries no platform
// state (spec 4.2) but gives back the `returnTo` of the
// start (spec 4.4), so the login's nonce travels there: the pending cookie holds a random
// secret, the start's returnTo a SHA-256 of it, and the callback accepts an exchange only when
// the returnTo it answers carries the hash of this browser's secret. The start URL shows only
// the hash, so a leaked start URL does not let anyone forge the matching cookie.

/** The query parameter of returnTo that carries the login's nonce; removed at the callback. */
export const LOGIN_NONCE_PARAM = 'gw_login_nonce';

/** The nonce of a login: SHA-256 of the pending cookie's secret, base64url. */
export function loginNonceOf(pendingSecret: string): string {
  return createHash('sha256').update(pendingSecret, 'utf8').digest('base64url');
}

/** returnTo with the nonce as its last query parameter (returnTo has no fragment, 4.1.1). */
export function withLoginNonce(returnTo: string, nonce: string): string {
  const separator = returnTo.includes('?') ? '&' : '?';
  return `${returnTo}${separator}${LOGIN_NONCE_PARAM}=${nonce}`;
}

/**
 * The nonce returnTo carries as its last query parameter, and returnTo without it, as the
 * platform sent it to startLogin. Undefined when returnTo carries none.
 */
export function takeLoginNonce(returnTo: string): { nonce: string; returnTo: string } | undefined {
  const match = new RegExp(`[?&]${LOGIN_NONCE_PARAM}=([A-Za-z0-9_-]*)$`).exec(returnTo);
  if (match === null) return undefined;
  return { nonce: match[1] ?? '', returnTo: returnTo.slice(0, match.index) };
}

/**
 * Whether the nonce returned by the gateway is the one of this browser's pending secret.
 * Both sides are hashed to the same length first, so the comparison's time says nothing.
 */
export function isLoginOfThisBrowser(returnedNonce: string, pendingSecret: string): boolean {
  const expected = createHash('sha256').update(loginNonceOf(pendingSecret)).digest();
  const returned = createHash('sha256').update(returnedNonce).digest();
  return timingSafeEqual(expected, returned);
}
