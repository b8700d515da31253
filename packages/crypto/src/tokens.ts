import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';

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
  return takeRandomBytes(bytes).toString('base64url');
}

// One call into the system's random source per 256 tokens instead of one per token, since a
// login start draws several tokens and each call is a system call. The bytes come from the
// same CSPRNG and each is handed out once, as node:crypto's randomUUID does with its own cache.
const POOL_BYTES = 8192;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * `bytes` fresh random bytes from the pool: a view, valid until the caller is done with it
 * (never handed out again). Also the nonces (IVs) of the keyring's encryption.
 */
export function takeRandomBytes(bytes: number): Buffer {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes));
  if (poolOffset + bytes > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    poolOffset = 0;
  }
  const taken = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return taken;
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
