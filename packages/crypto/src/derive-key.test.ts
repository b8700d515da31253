import { hkdfSync } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { DecryptionError } from './decryption-error.js';
import { createKeyringFromSecret, deriveKey } from './derive-key.js';

const secret = 'a-configured-secret-of-at-least-32-chars';

describe('deriveKey', () => {
  it('returns 32 bytes, the same for the same secret and purpose', () => {
    const key = deriveKey(secret, 'identity-environment-client-secret');
    expect(key).toHaveLength(32);
    expect(deriveKey(secret, 'identity-environment-client-secret').equals(key)).toBe(true);
  });

  it('is HKDF-SHA256 of the secret with the purpose as info', () => {
    const expected = Buffer.from(
      hkdfSync('sha256', secret, 'auth-gateway/derive-key/v1', 'purpose-a', 32),
    );
    expect(deriveKey(secret, 'purpose-a').equals(expected)).toBe(true);
  });

  it('gives unrelated keys for different purposes or secrets', () => {
    const a = deriveKey(secret, 'purpose-a');
    expect(deriveKey(secret, 'purpose-b').equals(a)).toBe(false);
    expect(deriveKey(`${secret}!`, 'purpose-a').equals(a)).toBe(false);
  });

  it('refuses secrets shorter than 32 characters and an empty purpose', () => {
    expect(() => deriveKey('x'.repeat(31), 'purpose')).toThrow(RangeError);
    expect(deriveKey('x'.repeat(32), 'purpose')).toHaveLength(32);
    expect(() => deriveKey(secret, '')).toThrow(RangeError);
  });

  it('does not put the secret in its error message', () => {
    const short = 'short-recognisable';
    let message = '';
    try {
      deriveKey(short, 'purpose');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('at least 32 characters');
    expect(message).not.toContain(short);
  });
});

describe('createKeyringFromSecret', () => {
  it('round trips and reads data sealed by another keyring built from the same secret', () => {
    const sealed = createKeyringFromSecret(secret, 'env-secrets').encrypt('client-secret', 'ENV');
    const later = createKeyringFromSecret(secret, 'env-secrets');
    expect(later.decryptString(sealed, 'ENV')).toBe('client-secret');
  });

  it('uses a stable 8-character fingerprint as key id that changes with the secret', () => {
    const ring = createKeyringFromSecret(secret, 'env-secrets');
    expect(ring.activeKeyId).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(createKeyringFromSecret(secret, 'env-secrets').activeKeyId).toBe(ring.activeKeyId);
    expect(createKeyringFromSecret(`${secret}2`, 'env-secrets').activeKeyId).not.toBe(
      ring.activeKeyId,
    );
    expect(ring.encrypt('x').split('.')[1]).toBe(ring.activeKeyId);
  });

  it('makes stored secrets unreadable after the secret changes', () => {
    const sealed = createKeyringFromSecret(secret, 'env-secrets').encrypt('client-secret');
    const changed = createKeyringFromSecret('a-completely-different-secret-value!!', 'env-secrets');
    expect(() => changed.decrypt(sealed)).toThrow(DecryptionError);
  });

  it('separates purposes: data sealed for one purpose does not open under another', () => {
    const sealed = createKeyringFromSecret(secret, 'purpose-a').encrypt('x');
    expect(() => createKeyringFromSecret(secret, 'purpose-b').decrypt(sealed)).toThrow(
      DecryptionError,
    );
  });
});
