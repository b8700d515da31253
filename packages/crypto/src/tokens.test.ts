import { createHash } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { hashToken, randomToken, tokenHashEquals, verifyTokenAgainstHash } from './tokens.js';

describe('randomToken', () => {
  it('returns 43 base64url characters (256 bits) by default', () => {
    const token = randomToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it('returns longer tokens when asked for more bytes', () => {
    const token = randomToken(48);
    expect(token).toMatch(/^[A-Za-z0-9_-]{64}$/);
  });

  it('never repeats and never uses +, / or =', () => {
    const tokens = Array.from({ length: 1000 }, () => randomToken());
    expect(new Set(tokens).size).toBe(1000);
    for (const token of tokens) expect(token).not.toMatch(/[+/=]/);
  });

  it('spreads over the whole alphabet (not a constant or counter)', () => {
    const characters = new Set(Array.from({ length: 200 }, () => randomToken()).join(''));
    expect(characters.size).toBeGreaterThan(60);
  });

  it('refuses fewer than 32 bytes and non-integers', () => {
    expect(() => randomToken(31)).toThrow(RangeError);
    expect(() => randomToken(16)).toThrow(RangeError);
    expect(() => randomToken(32.5)).toThrow(RangeError);
    expect(() => randomToken(Number.NaN)).toThrow(RangeError);
  });
});

describe('hashToken', () => {
  it('is the base64url SHA-256 of the token', () => {
    expect(hashToken('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(hashToken('abc')).toBe(createHash('sha256').update('abc').digest('base64url'));
  });

  it('is deterministic and differs for different tokens', () => {
    const token = randomToken();
    expect(hashToken(token)).toBe(hashToken(token));
    expect(hashToken(token)).not.toBe(hashToken(`${token}x`));
    expect(hashToken(token)).not.toContain(token);
  });

  it('hashes unicode by its UTF-8 bytes', () => {
    expect(hashToken('é')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('base64url'),
    );
  });
});

describe('tokenHashEquals', () => {
  const hash = hashToken('token-one');

  it('is true for equal hashes', () => {
    expect(tokenHashEquals(hash, `${hash}`)).toBe(true);
  });

  it('is false when one character differs, at either end', () => {
    const lastChanged = hash.slice(0, -1) + (hash.endsWith('A') ? 'B' : 'A');
    const firstChanged = (hash.startsWith('A') ? 'B' : 'A') + hash.slice(1);
    expect(tokenHashEquals(hash, lastChanged)).toBe(false);
    expect(tokenHashEquals(hash, firstChanged)).toBe(false);
  });

  it('is false, without throwing, for different lengths', () => {
    expect(tokenHashEquals(hash, hash.slice(0, -1))).toBe(false);
    expect(tokenHashEquals(hash, `${hash}A`)).toBe(false);
    expect(tokenHashEquals(hash, '')).toBe(false);
  });

  it('treats empty strings as never matching', () => {
    expect(tokenHashEquals('', '')).toBe(false);
  });
});

describe('verifyTokenAgainstHash', () => {
  it('accepts the token whose hash is stored and rejects any other', () => {
    const token = randomToken();
    const stored = hashToken(token);
    expect(verifyTokenAgainstHash(token, stored)).toBe(true);
    expect(verifyTokenAgainstHash(randomToken(), stored)).toBe(false);
    expect(verifyTokenAgainstHash(token, hashToken(randomToken()))).toBe(false);
  });

  it('does not accept the stored hash itself as the token', () => {
    const stored = hashToken(randomToken());
    expect(verifyTokenAgainstHash(stored, stored)).toBe(false);
  });

  it('rejects a malformed stored hash without throwing', () => {
    expect(verifyTokenAgainstHash(randomToken(), 'short')).toBe(false);
    expect(verifyTokenAgainstHash(randomToken(), '')).toBe(false);
  });
});
