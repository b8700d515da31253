import { isIP } from 'node:net';
import { GatewayError } from '@gateway/errors';
import { parseReturnUrlRoot } from './return-to.js';
import type { IdentityTier } from './registry-deps.js';

export type PairUrls = { returnUrl: string; callbackUrl: string };

function invalid(path: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_ERROR', `${path}: ${message}`, {
    details: { issues: [{ location: 'body', path, message }] },
  });
}

/**
 * A pair's callback: the platform backend URL that receives `?code=handoff_...` (spec 2.2).
 * Absolute http(s), no credentials, no fragment (the code is appended as a query parameter).
 */
export function normalizeCallbackUrl(raw: string, path: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(path, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalid(path, 'must be an absolute http(s) URL');
  }
  if (url.username !== '' || url.password !== '' || raw.includes('@')) {
    throw invalid(path, 'must not contain credentials');
  }
  if (raw.includes('#')) throw invalid(path, 'must not contain a fragment');
  if (/[\s\\]/.test(raw)) throw invalid(path, 'must not contain whitespace or backslashes');
  return url.href;
}

/** A return URL root (spec 2.2), normalized: origin plus path without a trailing slash. */
export function normalizeReturnUrl(raw: string, path: string): string {
  try {
    const root = parseReturnUrlRoot(raw);
    return root.path === '/' ? root.origin : `${root.origin}${root.path}`;
  } catch (error) {
    if (error instanceof GatewayError) throw invalid(path, error.message);
    throw error;
  }
}

/**
 * Spec 2.2: production-tier environments require public HTTPS URLs: https, and a host that
 * is a public DNS name or address (not localhost, loopback, private, link-local or a
 * single-label / .local / .internal / .localhost name).
 */
export function requirePublicHttpsUrls(pairs: readonly PairUrls[], tier: IdentityTier): void {
  if (tier !== 'production') return;
  pairs.forEach((pair, index) => {
    for (const [field, value] of [
      ['returnUrl', pair.returnUrl],
      ['callbackUrl', pair.callbackUrl],
    ] as const) {
      if (!isPublicHttpsUrl(value)) {
        throw invalid(
          `redirectPairs.${index}.${field}`,
          'must be a public https URL for a production-tier identity environment',
        );
      }
    }
  });
}

export function isPublicHttpsUrl(value: string): boolean {
  const url = new URL(value);
  if (url.protocol !== 'https:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const version = isIP(host);
  if (version === 4) return !isPrivateIPv4(host);
  if (version === 6) return !isPrivateIPv6(host);
  if (!host.includes('.')) return false;
  return !/(^|\.)(localhost|local|internal|lan|home\.arpa|test|invalid|example)$/.test(host);
}

function isPrivateIPv4(address: string): boolean {
  const [a = 0, b = 0] = address.split('.').map(Number);
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224
  );
}

function isPrivateIPv6(address: string): boolean {
  return (
    address === '::' ||
    address === '::1' ||
    /^f[cd]/.test(address) ||
    /^fe[89ab]/.test(address) ||
    address.startsWith('::ffff:')
  );
}
