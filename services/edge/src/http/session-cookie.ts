import type { IncomingMessage, ServerResponse } from 'node:http';

/** The gateway session cookie (spec 2.7, 4.2 step 7, 5 gatewayCookieAuth). */
export const SESSION_COOKIE_NAME = 'svc_auth_session';

/**
 * Longest session token the edge passes on. Tokens the gateway issues are far shorter; the
 * same bound applies to `token` on introspect (spec 4.5).
 */
export const MAX_SESSION_TOKEN_LENGTH = 512;

export type CookieOptions = {
  /** `Secure` attribute: on when NODE_ENV is production (spec 4.2 step 7). */
  secure: boolean;
};

/**
 * The value of the first cookie called `name` in a `Cookie` header (RFC 6265 section 5.4:
 * `name=value` pairs separated by `;`), without its optional surrounding double quotes.
 * Undefined when absent. Values are returned as sent, not decoded.
 *
 * When a name occurs more than once (a cookie set for a more specific path or domain is sent
 * first) the first one wins, as browsers order the more specific cookie first.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    if (pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1)
      : value;
  }
  return undefined;
}

/**
 * The session token carried by `svc_auth_session`, URL-decoded (spec 4.6: the cookie holds
 * the URL-encoded gatewayToken; a platform backend may forward the raw token, which decodes
 * to itself). Undefined when the cookie is absent, empty, not decodable or longer than a
 * token can be: such a request carries no session. Whether the token names a live session
 * is the auth-flow service's decision.
 */
export function readSessionToken(req: IncomingMessage): string | undefined {
  const raw = readCookie(req.headers.cookie, SESSION_COOKIE_NAME);
  if (raw === undefined || raw === '') return undefined;
  let token: string;
  try {
    token = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  if (token === '' || token.length > MAX_SESSION_TOKEN_LENGTH) return undefined;
  return token;
}

/**
 * Sets the session cookie: HttpOnly, `Path=/`, `SameSite=Lax`, `Secure` in production (spec
 * 4.2 step 7), living until the session expires (`Max-Age`, seconds from now).
 */
export function setSessionCookie(
  res: ServerResponse,
  token: string,
  expiresAt: string,
  options: CookieOptions,
  now: number = Date.now(),
): void {
  const expiresAtMs = Date.parse(expiresAt);
  if (Number.isNaN(expiresAtMs)) {
    throw new Error('The session expiry from the auth-flow service is not a timestamp');
  }
  const maxAgeSeconds = Math.max(0, Math.floor((expiresAtMs - now) / 1000));
  writeSessionCookie(res, encodeURIComponent(token), maxAgeSeconds, options);
}

/** Clears the session cookie (`Max-Age=0`, same attributes as when it was set; spec 4.6). */
export function clearSessionCookie(res: ServerResponse, options: CookieOptions): void {
  writeSessionCookie(res, '', 0, options);
}

function writeSessionCookie(
  res: ServerResponse,
  value: string,
  maxAgeSeconds: number,
  options: CookieOptions,
): void {
  const attributes = [
    `${SESSION_COOKIE_NAME}=${value}`,
    `Max-Age=${maxAgeSeconds}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (options.secure) attributes.push('Secure');
  // One session cookie per response: a later write (clearing after setting) replaces the
  // earlier one, other cookies are kept.
  const existing = res.getHeader('Set-Cookie');
  const others = (Array.isArray(existing) ? existing : existing === undefined ? [] : [existing])
    .map(String)
    .filter((cookie) => !cookie.startsWith(`${SESSION_COOKIE_NAME}=`));
  res.setHeader('Set-Cookie', [...others, attributes.join('; ')]);
}

/**
 * The session cookie changes an operation asks for, kept until its answer is written: a
 * failed request sets no cookie (an operation's `afterFailure` may ask again).
 */
export function createSessionCookieChanges() {
  let pending: { token: string; expiresAt: string } | 'clear' | undefined;
  return {
    set(token: string, expiresAt: string): void {
      pending = { token, expiresAt };
    },
    clear(): void {
      pending = 'clear';
    },
    discard(): void {
      pending = undefined;
    },
    writeTo(res: ServerResponse, options: CookieOptions): void {
      if (pending === 'clear') clearSessionCookie(res, options);
      else if (pending !== undefined) {
        setSessionCookie(res, pending.token, pending.expiresAt, options);
      }
    },
  };
}
