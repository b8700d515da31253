import { toBase64Url } from './base64url.js';
import { ciphertextParts, IV_BYTES, TAG_BYTES, VERSION } from './keyring.js';
import { KEY_ID_PATTERN } from './encryption-keys.js';

// The keyring's ciphertexts are text (`v1.<kid>.<iv>.<data>.<tag>`, base64url parts) so they fit
// in JSON, SQL text columns and URLs. A store that can keep bytes saves a quarter by keeping
// the decoded parts instead: [1][kid length][kid][iv 12][tag 16][data]. Both directions are
// exact, so the text that comes back decrypts as the one that went in.

const VERSION_BYTE = 1;

/** The bytes form of a keyring ciphertext, or undefined when the text is not one. */
export function ciphertextToBytes(ciphertext: string): Buffer | undefined {
  const parsed = ciphertextParts(ciphertext);
  if (parsed === undefined) return undefined;
  const { kid, iv, data, tag } = parsed;
  return Buffer.concat([
    Buffer.of(VERSION_BYTE, kid.length),
    Buffer.from(kid, 'latin1'),
    iv,
    tag,
    data,
  ]);
}

/** The keyring's text form of bytes written by ciphertextToBytes; throws on anything else. */
export function ciphertextFromBytes(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kidLength = buffer[1];
  if (buffer[0] !== VERSION_BYTE || kidLength === undefined) {
    throw new Error('Not a ciphertext in bytes form');
  }
  const ivStart = 2 + kidLength;
  const tagStart = ivStart + IV_BYTES;
  const dataStart = tagStart + TAG_BYTES;
  const kid = buffer.toString('latin1', 2, ivStart);
  if (buffer.length < dataStart || !KEY_ID_PATTERN.test(kid)) {
    throw new Error('Not a ciphertext in bytes form');
  }
  return [
    VERSION,
    kid,
    toBase64Url(buffer.subarray(ivStart, tagStart)),
    toBase64Url(buffer.subarray(dataStart)),
    toBase64Url(buffer.subarray(tagStart, dataStart)),
  ].join('.');
}
