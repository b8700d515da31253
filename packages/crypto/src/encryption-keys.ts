import { randomBytes } from 'node:crypto';
import { fromBase64Url, toBase64Url } from './base64url.js';

/** An AES-256-GCM key with the id that is written into every ciphertext it produces. */
export type EncryptionKey = { id: string; key: Buffer };

export const ENCRYPTION_KEY_BYTES = 32;
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

const FORMAT_HELP =
  'Expected "<id>:<key>[,<id>:<key>...]" where each id matches ^[A-Za-z0-9_-]{1,32}$ and each ' +
  'key is 32 random bytes encoded as base64url (43 characters, no padding); the first key ' +
  'encrypts, the others only decrypt older data. Generate a key with: ' +
  `node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"`;

function specError(problem: string): Error {
  // Only positions are reported: an id or key from a malformed spec may be key material.
  return new Error(`Invalid encryption key spec: ${problem}. ${FORMAT_HELP}`);
}

/** Checks an id and key, throwing a RangeError that never contains the key bytes. */
export function assertValidEncryptionKey(key: EncryptionKey): void {
  if (!KEY_ID_PATTERN.test(key.id)) {
    throw new RangeError('Encryption key id must match ^[A-Za-z0-9_-]{1,32}$');
  }
  if (key.key.length !== ENCRYPTION_KEY_BYTES) {
    throw new RangeError(`Encryption key "${key.id}" must be ${ENCRYPTION_KEY_BYTES} bytes`);
  }
}

/**
 * Parses `"kid1:<base64url 32 bytes>,kid0:<...>"`. The first key is the active one. Whitespace
 * around entries and empty entries (a trailing comma) are ignored. Errors explain the format
 * and point at the entry by position, never repeating the configured text.
 */
export function parseEncryptionKeys(spec: string): EncryptionKey[] {
  const entries = spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw specError('no keys given');

  const keys: EncryptionKey[] = [];
  const positionById = new Map<string, number>();
  entries.forEach((entry, index) => {
    const position = index + 1;
    const separator = entry.indexOf(':');
    if (separator < 0) throw specError(`entry ${position} has no ":" between id and key`);
    const id = entry.slice(0, separator).trim();
    const encoded = entry.slice(separator + 1).trim();
    if (!KEY_ID_PATTERN.test(id)) {
      throw specError(`entry ${position} has an id that does not match ^[A-Za-z0-9_-]{1,32}$`);
    }
    const key = fromBase64Url(encoded.replace(/=+$/, ''));
    if (key === undefined) throw specError(`entry ${position} has a key that is not base64url`);
    if (key.length !== ENCRYPTION_KEY_BYTES) {
      throw specError(
        `entry ${position} has a key of ${key.length} bytes instead of ${ENCRYPTION_KEY_BYTES}`,
      );
    }
    const earlier = positionById.get(id);
    if (earlier !== undefined) {
      throw specError(`entries ${earlier} and ${position} use the same id`);
    }
    positionById.set(id, position);
    keys.push({ id, key });
  });
  return keys;
}

/** A fresh single-key spec `"<id>:<base64url 32 random bytes>"`. */
export function generateEncryptionKeySpec(id: string = 'k1'): string {
  if (!KEY_ID_PATTERN.test(id)) {
    throw new RangeError('Encryption key id must match ^[A-Za-z0-9_-]{1,32}$');
  }
  return `${id}:${toBase64Url(randomBytes(ENCRYPTION_KEY_BYTES))}`;
}
