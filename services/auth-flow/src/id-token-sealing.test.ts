import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { generateKeyPair, SignJWT } from 'jose';
import {
  createKeyring,
  DecryptionError,
  generateEncryptionKeySpec,
  parseEncryptionKeys,
  randomToken,
} from '@gateway/crypto';
import type { IdTokenSession } from './id-token-sealing.js';
import { openIdToken, packIdToken, sealIdToken, unpackIdToken } from './id-token-sealing.js';

// Spec 2.6: the ID token is stored encrypted and used only as id_token_hint at logout, so what
// is opened must be the very text the identity provider issued. It is most of a session's
// Redis memory, hence the packing.

const keyring = createKeyring(parseEncryptionKeys(generateEncryptionKeySpec('k1')));
const ISSUER = 'http://127.0.0.1:4010/api/auth/env/PROD';

function session(subject = randomUUID(), email = 'ada.lovelace@example.test'): IdTokenSession {
  return { id: randomUUID(), snapshot: { issuer: ISSUER, subject, email } };
}

async function idToken(
  alg: 'EdDSA' | 'RS256' | 'ES256',
  of: IdTokenSession,
  extra: Record<string, unknown> = {},
) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    email: of.snapshot.email,
    email_verified: true,
    nonce: randomToken(),
    at_hash: randomToken().slice(0, 22),
    sid: randomToken().slice(0, 21),
    auth_time: now,
    ...extra,
  })
    .setProtectedHeader({ alg, typ: 'JWT', kid: randomToken() })
    .setSubject(of.snapshot.subject)
    .setIssuer(ISSUER)
    .setAudience('gateway-prod')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey);
}

describe('sealIdToken / openIdToken', () => {
  it.each(['EdDSA', 'RS256', 'ES256'] as const)(
    'gives back the exact %s token, sealed in far fewer bytes than its text',
    async (alg) => {
      const of = session();
      const token = await idToken(alg, of, {
        name: 'Ada Lovelace',
        picture: 'https://x.test/a.png',
      });
      const sealed = sealIdToken(keyring, token, of);
      expect(openIdToken(keyring, sealed, of)).toBe(token);
      // Encrypting the text as it was stored before: the packing saves at least a quarter.
      const textSealed = keyring.encrypt(token, `id-token:${of.id}`);
      expect(sealed.length).toBeLessThan(textSealed.length * 0.75);
    },
  );

  it("packs with the session's claims in the dictionary and opens with the same claims", async () => {
    const of = session();
    const token = await idToken('RS256', of);
    const packed = packIdToken(token, of.snapshot);
    expect(unpackIdToken(packed, of.snapshot)).toBe(token);
  });

  it('refuses a plaintext of no known layout (text sealed before the packing)', async () => {
    const of = session();
    const token = await idToken('EdDSA', of);
    const text = keyring.encrypt(token, `id-token:${of.id}`);
    expect(() => openIdToken(keyring, text, of)).toThrow('Unknown sealed ID token layout');
  });

  it('is bound to its session: another session id does not open it', async () => {
    const of = session();
    const sealed = sealIdToken(keyring, await idToken('EdDSA', of), of);
    expect(() => openIdToken(keyring, sealed, { ...of, id: randomUUID() })).toThrow(
      DecryptionError,
    );
  });

  it.each([
    [
      'a token with non-canonical base64url (padding bits set)',
      'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In1.AB',
    ],
    ['a token with padding characters', 'eyJhbGciOiJub25lIn0=.eyJzdWIiOiJ4In0.c2ln'],
    ['a token with base64 (not url) characters', 'eyJ+.eyJ/.sig'],
    ['a token with an empty signature', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
    ['an encrypted (five-part) token', 'a.b.c.d.e'],
    ['an opaque string', 'not a jwt at all — ünïcödé'],
    ['an empty string', ''],
  ])('keeps %s byte for byte', (_label, token) => {
    const of = session();
    expect(openIdToken(keyring, sealIdToken(keyring, token, of), of)).toBe(token);
  });

  it('packs large tokens too (lengths beyond one varint byte)', async () => {
    const of = session();
    const token = await idToken('RS256', of, {
      groups: Array.from({ length: 200 }, (_, i) => `g${i}`),
    });
    expect(unpackIdToken(packIdToken(token, of.snapshot), of.snapshot)).toBe(token);
  });

  it('refuses a packed token whose parts were cut short instead of answering a wrong one', async () => {
    const of = session();
    const packed = packIdToken(await idToken('EdDSA', of), of.snapshot);
    expect(() => unpackIdToken(packed.subarray(0, 6), of.snapshot)).toThrow();
  });
});
