import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Tokens carry at least 256 bits of entropy. */
export const MIN_TOKEN_BYTES = 32;

/**
 * A fresh random bearer value (session token, handoff code, state, nonce, platform secret)
 * encoded as base64url. 32 bytes give a 43-character token.
 */
export function randomToken(bytes: number = MIN_TOKEN_BYTES): string {
  if (!Number.isInteger(bytes) || bytes < MIN_TOKEN_BYTES) {
    throw new RangeError(`randomToken needs an integer of at least ${MIN_TOKEN_BYTES} bytes`);
  }
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 of the token's UTF-8 bytes, base64url. This is what gets stored, never the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/**
 * Constant-time comparison of two hash strings. Strings of different lengths (and empty
 * strings, which are never valid hashes) compare unequal without throwing.
 */
export function tokenHashEquals(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length === 0 || left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** Hashes a presented token and compares it in constant time with a stored hash. */
export function verifyTokenAgainstHash(token: string, storedHash: string): boolean {
  return tokenHashEquals(hashToken(token), storedHash);
}
