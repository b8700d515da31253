import { randomBytes } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { DecryptionError } from './decryption-error.js';
import type { DecryptionFailure } from './decryption-error.js';
import { generateEncryptionKeySpec, parseEncryptionKeys } from './encryption-keys.js';
import type { EncryptionKey } from './encryption-keys.js';
import { createKeyring } from './keyring.js';

const newKey = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });

function decryptionFailure(action: () => unknown): DecryptionError {
  try {
    action();
  } catch (error) {
    if (error instanceof DecryptionError) return error;
    throw new Error(`expected DecryptionError, got ${String(error)}`);
  }
  throw new Error('expected the call to throw, but it returned');
}

function expectFailure(action: () => unknown, reason: DecryptionFailure): void {
  expect(decryptionFailure(action).reason).toBe(reason);
}

/** Flips one bit inside the decoded bytes of part `index` of a v1 ciphertext. */
function flipBit(ciphertext: string, index: number, byte = 0): string {
  const parts = ciphertext.split('.');
  const bytes = Buffer.from(parts[index] ?? '', 'base64url');
  bytes[byte] = (bytes[byte] ?? 0) ^ 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('Keyring round trips', () => {
  const keyring = createKeyring([newKey('k1')]);

  it.each([
    ['ascii', 'client-secret-value'],
    ['empty', ''],
    ['unicode', 'pässwörd ✓ 🔑 中文'],
    ['long', 'x'.repeat(100_000)],
  ])('decrypts a %s string back to the same text', (_label, plaintext) => {
    const ciphertext = keyring.encrypt(plaintext);
    expect(keyring.decryptString(ciphertext)).toBe(plaintext);
    expect(keyring.decrypt(ciphertext).equals(Buffer.from(plaintext, 'utf8'))).toBe(true);
  });

  it('decrypts a Buffer with arbitrary bytes back to the same bytes', () => {
    const bytes = randomBytes(257);
    expect(keyring.decrypt(keyring.encrypt(bytes)).equals(bytes)).toBe(true);
  });

  it('uses associated data when given', () => {
    const ciphertext = keyring.encrypt('secret', 'environment:STAGING');
    expect(keyring.decryptString(ciphertext, 'environment:STAGING')).toBe('secret');
  });

  it('writes v1.<kid>.<iv>.<ciphertext>.<tag> with a 12-byte iv and a 16-byte tag', () => {
    const ciphertext = keyring.encrypt('hello');
    const parts = ciphertext.split('.');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toBe('k1');
    expect(Buffer.from(parts[2] ?? '', 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[3] ?? '', 'base64url')).toHaveLength(5);
    expect(Buffer.from(parts[4] ?? '', 'base64url')).toHaveLength(16);
    expect(ciphertext).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('does not contain the plaintext and differs on every call (random iv)', () => {
    const first = keyring.encrypt('same plaintext');
    const second = keyring.encrypt('same plaintext');
    expect(first).not.toBe(second);
    expect(first.split('.')[2]).not.toBe(second.split('.')[2]);
    expect(first).not.toContain(Buffer.from('same plaintext').toString('base64url'));
  });

  it('exposes the active key id and all key ids', () => {
    const ring = createKeyring([newKey('new'), newKey('old')]);
    expect(ring.activeKeyId).toBe('new');
    expect(ring.keyIds).toEqual(['new', 'old']);
  });

  it('works with keys parsed from a spec', () => {
    const ring = createKeyring(parseEncryptionKeys(generateEncryptionKeySpec('kX')));
    expect(ring.decryptString(ring.encrypt('abc'))).toBe('abc');
    expect(ring.encrypt('abc').split('.')[1]).toBe('kX');
  });
});

describe('Keyring rejects tampering', () => {
  const keyring = createKeyring([newKey('k1'), newKey('k0')]);
  const ciphertext = keyring.encrypt('the secret', 'record-1');

  it('flipped bit in the iv', () => {
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 2), 'record-1'),
      'authentication_failed',
    );
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 2, 11), 'record-1'),
      'authentication_failed',
    );
  });

  it('flipped bit in the ciphertext', () => {
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 3), 'record-1'),
      'authentication_failed',
    );
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 3, 9), 'record-1'),
      'authentication_failed',
    );
  });

  it('flipped bit in the tag', () => {
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 4), 'record-1'),
      'authentication_failed',
    );
    expectFailure(
      () => keyring.decrypt(flipBit(ciphertext, 4, 15), 'record-1'),
      'authentication_failed',
    );
  });

  it('kid swapped to another key of the keyring', () => {
    const swapped = ciphertext.replace('v1.k1.', 'v1.k0.');
    expectFailure(() => keyring.decrypt(swapped, 'record-1'), 'authentication_failed');
  });

  it('kid swapped even when both ids hold the same key bytes', () => {
    const key = randomBytes(32);
    const ring = createKeyring([
      { id: 'a', key },
      { id: 'b', key },
    ]);
    const relabelled = ring.encrypt('data').replace('v1.a.', 'v1.b.');
    expectFailure(() => ring.decrypt(relabelled), 'authentication_failed');
  });

  it('wrong, missing or extra associated data (ciphertext moved to another record)', () => {
    expectFailure(() => keyring.decrypt(ciphertext, 'record-2'), 'authentication_failed');
    expectFailure(() => keyring.decrypt(ciphertext), 'authentication_failed');
    const withoutAad = keyring.encrypt('the secret');
    expectFailure(() => keyring.decrypt(withoutAad, 'record-1'), 'authentication_failed');
  });

  it('truncated ciphertext', () => {
    expectFailure(() => keyring.decrypt(ciphertext.slice(0, -1), 'record-1'), 'malformed');
    expectFailure(() => keyring.decrypt(ciphertext.slice(0, -4), 'record-1'), 'malformed');
    const parts = ciphertext.split('.');
    expectFailure(() => keyring.decrypt(parts.slice(0, 4).join('.'), 'record-1'), 'malformed');
    const shortData = [...parts.slice(0, 3), (parts[3] ?? '').slice(0, -2), parts[4]].join('.');
    expectFailure(() => keyring.decrypt(shortData, 'record-1'), 'authentication_failed');
  });

  it.each([
    ['empty string', ''],
    ['plain text', 'not a ciphertext'],
    ['wrong version', 'v2.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['too many parts', 'v1.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA.AA'],
    ['bad kid', 'v1.k 1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['standard base64 iv', 'v1.k1.AAAAAAAAAAAAAAA+.AA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['short iv', 'v1.k1.AAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['short tag', 'v1.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAA'],
  ])('malformed input (%s)', (_label, text) => {
    expectFailure(() => keyring.decrypt(text), 'malformed');
  });

  it('non-canonical base64url text in a part', () => {
    // 'AB' and 'AA' decode to the same byte; only the canonical spelling is accepted.
    const parts = keyring.encrypt('x').split('.');
    const data = parts[3] ?? '';
    const alias = data.slice(0, -1) + String.fromCharCode(data.charCodeAt(data.length - 1) + 1);
    expect(Buffer.from(alias, 'base64url').equals(Buffer.from(data, 'base64url'))).toBe(true);
    expectFailure(
      () => keyring.decrypt([...parts.slice(0, 3), alias, parts[4]].join('.')),
      'malformed',
    );
  });

  it('decryptString rejects data that is not UTF-8', () => {
    const binary = keyring.encrypt(Buffer.from([0xff, 0xfe, 0x00]));
    expectFailure(() => keyring.decryptString(binary), 'not_utf8');
    expect(keyring.decrypt(binary).equals(Buffer.from([0xff, 0xfe, 0x00]))).toBe(true);
  });

  it('error messages never contain plaintext, key or ciphertext', () => {
    const key = newKey('k1');
    const ring = createKeyring([key]);
    const secret = 'very-recognisable-plaintext';
    const sealed = ring.encrypt(secret, 'aad-value');
    for (const attempt of [
      () => ring.decrypt(sealed, 'other'),
      () => ring.decryptString(flipBit(sealed, 3)),
      () => ring.decrypt(sealed.slice(0, -3)),
    ]) {
      const { message } = decryptionFailure(attempt);
      expect(message).not.toContain(secret);
      expect(message).not.toContain(key.key.toString('base64url'));
      expect(message).not.toContain(key.key.toString('hex'));
      expect(message).not.toContain(sealed.split('.')[3] ?? '');
      expect(message).not.toContain('aad-value');
    }
  });
});

describe('Keyring rotation', () => {
  const oldKey = newKey('k0');
  const newerKey = newKey('k1');

  it('still decrypts data of the old key after a new key is put first', () => {
    const before = createKeyring([oldKey]);
    const sealedBefore = before.encrypt('legacy secret', 'row-7');

    const after = createKeyring([newerKey, oldKey]);
    expect(after.decryptString(sealedBefore, 'row-7')).toBe('legacy secret');

    const sealedAfter = after.encrypt('new secret', 'row-7');
    expect(sealedAfter.split('.')[1]).toBe('k1');
    expect(after.decryptString(sealedAfter, 'row-7')).toBe('new secret');
    // The old keyring alone cannot read data written with the new key.
    expectFailure(() => before.decrypt(sealedAfter, 'row-7'), 'unknown_key');
  });

  it('fails with DecryptionError for data of a removed key', () => {
    const sealedOld = createKeyring([oldKey]).encrypt('x');
    expect(createKeyring([newerKey, oldKey]).decryptString(sealedOld)).toBe('x');
    const pruned = createKeyring([newerKey]);
    const error = decryptionFailure(() => pruned.decrypt(sealedOld));
    expect(error.reason).toBe('unknown_key');
    expect(error.message).toContain('"k0"');
  });

  it('fails when a key id is reused for different key bytes', () => {
    const sealed = createKeyring([oldKey]).encrypt('x');
    const impostor = createKeyring([{ id: 'k0', key: randomBytes(32) }]);
    expectFailure(() => impostor.decrypt(sealed), 'authentication_failed');
  });

  it('is not affected when the caller later changes the key buffer it passed in', () => {
    const key = newKey('k1');
    const ring = createKeyring([key]);
    const sealed = ring.encrypt('x');
    key.key.fill(0);
    expect(ring.decryptString(sealed)).toBe('x');
  });
});

describe('createKeyring validation', () => {
  it('rejects an empty key list, wrong key sizes, bad ids and duplicate ids', () => {
    expect(() => createKeyring([])).toThrow(RangeError);
    expect(() => createKeyring([{ id: 'k1', key: randomBytes(16) }])).toThrow(RangeError);
    expect(() => createKeyring([{ id: 'bad.id', key: randomBytes(32) }])).toThrow(RangeError);
    expect(() => createKeyring([newKey('k1'), newKey('k1')])).toThrow(/Duplicate/);
  });
});
