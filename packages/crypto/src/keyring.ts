import { createCipheriv, createDecipheriv } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { fromBase64Url, toBase64Url } from './base64url.js';
import { DecryptionError } from './decryption-error.js';
import { assertValidEncryptionKey, KEY_ID_PATTERN } from './encryption-keys.js';
import type { EncryptionKey } from './encryption-keys.js';
import { takeRandomBytes } from './tokens.js';

export const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/**
 * AES-256-GCM with key ids, so keys can rotate: encrypt always uses the active (first) key and
 * decrypt picks the key named in the ciphertext. Ciphertext text format:
 * `v1.<kid>.<iv b64url 12 bytes>.<ciphertext b64url>.<tag b64url 16 bytes>`.
 *
 * `associatedData` binds a ciphertext to its context (for example the id of the record that
 * stores it): decrypting with different associated data fails. Omitted associated data is the
 * same as the empty string.
 */
export interface Keyring {
  /** Id of the key that new ciphertexts are written with. */
  readonly activeKeyId: string;
  /** All key ids, the active one first. */
  readonly keyIds: readonly string[];
  encrypt(plaintext: string | Buffer, associatedData?: string): string;
  /** Throws DecryptionError for anything that is not an authentic ciphertext of this keyring. */
  decrypt(ciphertext: string, associatedData?: string): Buffer;
  /** decrypt, then UTF-8 decoding; invalid UTF-8 also throws DecryptionError. */
  decryptString(ciphertext: string, associatedData?: string): string;
}

// The version and key id are authenticated too, so a ciphertext cannot be relabelled.
function additionalData(kid: string, associatedData: string | undefined): Buffer {
  return Buffer.from(`${VERSION}.${kid}\n${associatedData ?? ''}`, 'utf8');
}

export type ParsedCiphertext = { kid: string; iv: Buffer; data: Buffer; tag: Buffer };

/** The parts of a `v1.<kid>.<iv>.<data>.<tag>` ciphertext, or undefined when it is not one. */
export function ciphertextParts(ciphertext: string): ParsedCiphertext | undefined {
  if (typeof ciphertext !== 'string') return undefined;
  const parts = ciphertext.split('.');
  if (parts.length !== 5) return undefined;
  const [version, kid, ivText, dataText, tagText] = parts as [
    string,
    string,
    string,
    string,
    string,
  ];
  if (version !== VERSION || !KEY_ID_PATTERN.test(kid)) return undefined;
  const iv = fromBase64Url(ivText);
  const data = fromBase64Url(dataText);
  const tag = fromBase64Url(tagText);
  if (iv?.length !== IV_BYTES || data === undefined || tag?.length !== TAG_BYTES) {
    return undefined;
  }
  return { kid, iv, data, tag };
}

function parseCiphertext(ciphertext: string): ParsedCiphertext {
  const parsed = ciphertextParts(ciphertext);
  if (parsed === undefined) {
    throw new DecryptionError(
      'malformed',
      'Ciphertext is not in the v1.<kid>.<iv>.<data>.<tag> format',
    );
  }
  return parsed;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Builds a keyring; the first key is active. Throws on no keys, bad ids/lengths, duplicates. */
export function createKeyring(keys: readonly EncryptionKey[]): Keyring {
  if (keys.length === 0) throw new RangeError('A keyring needs at least one key');
  const byId = new Map<string, Buffer>();
  for (const key of keys) {
    assertValidEncryptionKey(key);
    if (byId.has(key.id)) throw new RangeError(`Duplicate encryption key id "${key.id}"`);
    byId.set(key.id, Buffer.from(key.key)); // private copy: later changes by the caller do not leak in
  }
  const [active] = keys as [EncryptionKey, ...EncryptionKey[]];
  const activeKeyId = active.id;
  const activeKey = byId.get(activeKeyId) as Buffer;
  const keyIds = Object.freeze([...byId.keys()]);

  function decrypt(ciphertext: string, associatedData?: string): Buffer {
    const { kid, iv, data, tag } = parseCiphertext(ciphertext);
    const key = byId.get(kid);
    if (key === undefined) {
      throw new DecryptionError('unknown_key', `Ciphertext uses unknown key id "${kid}"`);
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(kid, associatedData));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(data), decipher.final()]);
    } catch {
      throw new DecryptionError(
        'authentication_failed',
        'Ciphertext failed authentication (tampered, wrong key or wrong associated data)',
      );
    }
  }

  return {
    activeKeyId,
    keyIds,
    encrypt(plaintext: string | Buffer, associatedData?: string): string {
      const iv = takeRandomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, activeKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(additionalData(activeKeyId, associatedData));
      const input = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
      const data = Buffer.concat([cipher.update(input), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, activeKeyId, toBase64Url(iv), toBase64Url(data), toBase64Url(tag)].join('.');
    },
    decrypt,
    decryptString(ciphertext: string, associatedData?: string): string {
      const bytes = decrypt(ciphertext, associatedData);
      try {
        return utf8.decode(bytes);
      } catch {
        throw new DecryptionError('not_utf8', 'Decrypted data is not UTF-8 text');
      }
    },
  };
}
