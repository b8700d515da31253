import { createHash, hkdfSync } from 'node:crypto';
import { createKeyring } from './keyring.js';
import type { Keyring } from './keyring.js';

/** Configured secrets such as IDENTITY_ENVIRONMENT_SECRET_KEY are at least 32 characters. */
export const MIN_SECRET_LENGTH = 32;

// Fixed, public salt: it separates these keys from any other HKDF use of the same secret.
const HKDF_SALT = 'auth-gateway/derive-key/v1';

/**
 * HKDF-SHA256 from a configured secret string to a 32-byte key for one named purpose
 * (different purposes give unrelated keys from the same secret).
 */
export function deriveKey(secret: string, purpose: string): Buffer {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new RangeError(`The secret must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (purpose === '') throw new RangeError('deriveKey needs a non-empty purpose');
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), HKDF_SALT, purpose, 32));
}

/**
 * A single-key keyring from a configured secret. The key id is a stable fingerprint of the
 * derived key (8 base64url characters of its SHA-256), so after the secret changes old
 * ciphertexts name a key id the keyring does not have and fail with DecryptionError.
 */
export function createKeyringFromSecret(secret: string, purpose: string): Keyring {
  const key = deriveKey(secret, purpose);
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  return createKeyring([{ id, key }]);
}
