/** Why a ciphertext could not be opened. */
export type DecryptionFailure = 'malformed' | 'unknown_key' | 'authentication_failed' | 'not_utf8';

/**
 * Thrown for every ciphertext that cannot be opened: malformed text, an unknown key id, or data
 * that fails GCM authentication (tampering, wrong associated data, wrong key). The message
 * names the reason only; it never contains plaintext, key material or the ciphertext.
 */
export class DecryptionError extends Error {
  override readonly name = 'DecryptionError';
  readonly reason: DecryptionFailure;

  constructor(reason: DecryptionFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}
