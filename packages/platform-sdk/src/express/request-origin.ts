import type { Request } from 'express';

// The platform's own origin and local paths: what the middleware sends to the gateway as
// `Origin` on logout, and how it turns a `returnTo` of its own into a URL under that origin.

/** True for `scheme://host[:port]` with an http(s) scheme and nothing else. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * The origin the browser sees: the `origin` option when set (behind a proxy that rewrites
 * Host, set it), else the request's protocol and Host header (Express's `trust proxy`
 * decides whether X-Forwarded-Proto counts). Undefined when the Host header is unusable.
 */
export function requestOrigin(req: Request, configured: string | undefined): string | undefined {
  if (configured !== undefined) return configured;
  const host = req.get('host');
  if (host === undefined || host === '') return undefined;
  let url: URL;
  try {
    url = new URL(`${req.protocol}://${host}`);
  } catch {
    return undefined;
  }
  const onlyHost =
    url.username === '' && url.password === '' && url.pathname === '/' && url.search === '';
  return onlyHost && url.hash === '' ? url.origin : undefined;
}

/**
 * A path on this site to go back to after sign-in: root-relative, not protocol-relative
 * (`//evil.example`, `/\evil.example`), at most 2048 characters, without a fragment.
 * Undefined for anything else, so a crafted link cannot turn the login route into an open
 * redirect (the gateway would refuse a foreign URL, but no foreign URL is even sent).
 */
export function localPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  if (hasControlCharacter(value)) return undefined;
  const base = 'http://local.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return undefined;
  }
  if (url.origin !== base) return undefined;
  return `${url.pathname}${url.search}`;
}

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
