import { describe, expect, it } from '@jest/globals';
import { ciphertextFromBytes, ciphertextToBytes } from './ciphertext-bytes.js';
import { createKeyring } from './keyring.js';
import { generateEncryptionKeySpec, parseEncryptionKeys } from './encryption-keys.js';

const keyring = createKeyring(parseEncryptionKeys(generateEncryptionKeySpec('key-2026_11')));

describe('ciphertextToBytes / ciphertextFromBytes', () => {
  it('keeps a ciphertext in three quarters of its text and gives back text that decrypts', () => {
    const plaintext = Buffer.alloc(600, 7);
    const text = keyring.encrypt(plaintext, 'session:1');
    const bytes = ciphertextToBytes(text);
    expect(bytes).toBeDefined();
    expect(bytes!.length).toBeLessThan(text.length * 0.76);
    const back = ciphertextFromBytes(bytes!);
    expect(back).toBe(text);
    expect(keyring.decrypt(back, 'session:1').equals(plaintext)).toBe(true);
  });

  it('round-trips an empty plaintext', () => {
    const text = keyring.encrypt('');
    expect(ciphertextFromBytes(ciphertextToBytes(text)!)).toBe(text);
  });

  it.each([
    ['not five parts', 'v1.k.a.b'],
    ['another version', keyring.encrypt('x').replace(/^v1/, 'v2')],
    ['a bad key id', keyring.encrypt('x').replace('key-2026_11', 'key 1')],
    ['a short iv', 'v1.k.AAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['non-canonical base64url', `${keyring.encrypt('x')}=`],
  ])('answers undefined for text that is not a keyring ciphertext: %s', (_label, text) => {
    expect(ciphertextToBytes(text)).toBeUndefined();
  });

  it('refuses bytes that are not its own form', () => {
    expect(() => ciphertextFromBytes(Buffer.from('v1.k.x'))).toThrow('Not a ciphertext');
    const bytes = ciphertextToBytes(keyring.encrypt('x'))!;
    expect(() => ciphertextFromBytes(bytes.subarray(0, 20))).toThrow('Not a ciphertext');
  });
});
