export { randomToken, hashToken, tokenHashEquals, verifyTokenAgainstHash } from './tokens.js';
export { parseEncryptionKeys, generateEncryptionKeySpec } from './encryption-keys.js';
export type { EncryptionKey } from './encryption-keys.js';
export { createKeyring } from './keyring.js';
export type { Keyring } from './keyring.js';
export { DecryptionError } from './decryption-error.js';
export type { DecryptionFailure } from './decryption-error.js';
export { deriveKey, createKeyringFromSecret } from './derive-key.js';
