import { randomBytes } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { generateEncryptionKeySpec, parseEncryptionKeys } from './encryption-keys.js';

const keyText = (bytes = 32): string => randomBytes(bytes).toString('base64url');

function errorMessageOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the call to throw');
}

describe('parseEncryptionKeys', () => {
  it('parses keys in order, the first being the active one', () => {
    const k1 = keyText();
    const k0 = keyText();
    const keys = parseEncryptionKeys(`kid1:${k1},kid0:${k0}`);
    expect(keys.map((key) => key.id)).toEqual(['kid1', 'kid0']);
    expect(keys[0]?.key.equals(Buffer.from(k1, 'base64url'))).toBe(true);
    expect(keys[1]?.key.equals(Buffer.from(k0, 'base64url'))).toBe(true);
  });

  it('ignores whitespace around entries, a trailing comma and base64 padding', () => {
    const key = keyText();
    const keys = parseEncryptionKeys(` a_1 : ${key}= , B-2:${keyText()} ,`);
    expect(keys.map((entry) => entry.id)).toEqual(['a_1', 'B-2']);
    expect(keys[0]?.key.equals(Buffer.from(key, 'base64url'))).toBe(true);
  });

  it('accepts what generateEncryptionKeySpec produces', () => {
    const spec = generateEncryptionKeySpec('k7');
    expect(spec).toMatch(/^k7:[A-Za-z0-9_-]{43}$/);
    const [key] = parseEncryptionKeys(spec);
    expect(key?.id).toBe('k7');
    expect(key?.key).toHaveLength(32);
    expect(generateEncryptionKeySpec()).toMatch(/^k1:/);
    expect(generateEncryptionKeySpec()).not.toBe(generateEncryptionKeySpec());
  });

  it('rejects an empty spec', () => {
    expect(() => parseEncryptionKeys('')).toThrow(/no keys/);
    expect(() => parseEncryptionKeys(' , ')).toThrow(/no keys/);
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => parseEncryptionKeys(`k1:${keyText(16)}`)).toThrow(/16 bytes instead of 32/);
    expect(() => parseEncryptionKeys(`k1:${keyText(33)}`)).toThrow(/33 bytes instead of 32/);
  });

  it('rejects standard base64 and other non-base64url key text', () => {
    const standard = randomBytes(32).toString('base64').replace(/^./, '+');
    expect(() => parseEncryptionKeys(`k1:${standard}`)).toThrow(/not base64url/);
    expect(() => parseEncryptionKeys('k1:not a key!')).toThrow(/not base64url/);
  });

  it('rejects bad and duplicate ids', () => {
    expect(() => parseEncryptionKeys(`:${keyText()}`)).toThrow(/entry 1 has an id/);
    expect(() => parseEncryptionKeys(`k.1:${keyText()}`)).toThrow(/entry 1 has an id/);
    expect(() => parseEncryptionKeys(`${'a'.repeat(33)}:${keyText()}`)).toThrow(
      /entry 1 has an id/,
    );
    expect(() => parseEncryptionKeys(`k1:${keyText()},k2:${keyText()},k1:${keyText()}`)).toThrow(
      /entries 1 and 3 use the same id/,
    );
  });

  it('rejects an entry without an id', () => {
    expect(() => parseEncryptionKeys(`k1:${keyText()},${keyText()}`)).toThrow(/entry 2 has no ":"/);
  });

  it('explains the expected format without repeating key material', () => {
    const shortKey = keyText(16);
    const validKey = keyText();
    const cases = [
      `k1:${shortKey}`,
      `k1:${validKey},${validKey}`, // forgotten id: the key sits where the id should be
      `${validKey}:${validKey}`, // key written as id
      `k1:${validKey},k1:${shortKey}`,
      `k1:${validKey.slice(0, 20)}+${validKey.slice(21)}`,
      `k1=${validKey}`,
    ];
    for (const spec of cases) {
      const message = errorMessageOf(() => parseEncryptionKeys(spec));
      expect(message).toContain('Expected "<id>:<key>');
      expect(message).not.toContain(shortKey);
      expect(message).not.toContain(validKey.slice(0, 12));
      expect(message).not.toContain(validKey.slice(-12));
    }
  });
});

describe('generateEncryptionKeySpec', () => {
  it('refuses ids that the parser would reject', () => {
    expect(() => generateEncryptionKeySpec('bad id')).toThrow(RangeError);
  });
});
