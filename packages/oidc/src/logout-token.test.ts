import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import { GatewayError } from '@gateway/errors';
import {
  BACKCHANNEL_LOGOUT_EVENT,
  verifyLogoutToken,
  type LogoutTokenRules,
} from './logout-token.js';

// Back-Channel Logout 1.0, section 2.6, check by check, against tokens signed here.

type Alg = 'RS256' | 'ES256' | 'EdDSA';
const pairs: Record<Alg, { privateKey: KeyObject; publicKey: KeyObject }> = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: generateKeyPairSync('ed25519'),
};
const kids: Record<Alg, string> = { RS256: 'rsa', ES256: 'ec', EdDSA: 'ed' };
const published: JWTVerifyGetKey = createLocalJWKSet({
  keys: (Object.keys(pairs) as Alg[]).map((alg) => ({
    ...pairs[alg].publicKey.export({ format: 'jwk' }),
    kid: kids[alg],
    use: 'sig',
  })),
});
/** A key of the same type that the environment never published, naming a published kid. */
const stranger = generateKeyPairSync('ed25519');

const issuer = 'https://id.example.test/api/auth/env/PROD';
const clientId = 'gateway';
const rules: LogoutTokenRules = {
  issuer,
  clientId,
  algorithms: ['EdDSA', 'RS256', 'ES256'],
  clockToleranceSeconds: 5,
  maxAgeSeconds: 300,
};
const now = () => Math.floor(Date.now() / 1000);
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: issuer,
    aud: clientId,
    iat: now(),
    exp: now() + 120,
    jti: `jti-${Math.random()}`,
    sub: 'user-1',
    sid: 'sid-1',
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...extra,
  };
}

function without(name: string, from = claims()): Record<string, unknown> {
  const copy = { ...from };
  delete copy[name];
  return copy;
}

function token(
  payload: Record<string, unknown> = claims(),
  options: { alg?: Alg; header?: Record<string, unknown>; key?: KeyObject } = {},
): string {
  const alg = options.alg ?? 'EdDSA';
  const input = `${segment({ alg, kid: kids[alg], typ: 'logout+jwt', ...options.header })}.${segment(payload)}`;
  const key = options.key ?? pairs[alg].privateKey;
  const signature = sign(
    alg === 'EdDSA' ? null : 'sha256',
    Buffer.from(input),
    alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key,
  );
  return `${input}.${signature.toString('base64url')}`;
}

async function refusal(jwt: string): Promise<string> {
  const error = await verifyLogoutToken(jwt, published, rules).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a refusal, got ${String(error)}`);
  expect(error.code).toBe('LOGOUT_TOKEN_INVALID');
  return error.message;
}

describe('verifyLogoutToken', () => {
  it.each(['EdDSA', 'RS256', 'ES256'] as const)(
    'accepts a logout token signed with %s and says whose sessions end',
    async (alg) => {
      const payload = claims({ jti: 'jti-accepted' });
      await expect(verifyLogoutToken(token(payload, { alg }), published, rules)).resolves.toEqual({
        jti: 'jti-accepted',
        issuedAt: payload.iat,
        sessionId: 'sid-1',
        subject: 'user-1',
      });
    },
  );

  it('accepts sid alone, sub alone, no exp, and an untyped or JWT-typed token', async () => {
    expect(await verifyLogoutToken(token(without('sub')), published, rules)).toMatchObject({
      sessionId: 'sid-1',
      subject: undefined,
    });
    expect(await verifyLogoutToken(token(without('sid')), published, rules)).toMatchObject({
      sessionId: undefined,
      subject: 'user-1',
    });
    await expect(verifyLogoutToken(token(without('exp')), published, rules)).resolves.toBeTruthy();
    for (const typ of [undefined, 'JWT', 'application/logout+jwt']) {
      const jwt = token(claims(), { header: { typ } });
      await expect(verifyLogoutToken(jwt, published, rules)).resolves.toBeTruthy();
    }
  });

  it('refuses a token signed by a key the environment did not publish', async () => {
    expect(await refusal(token(claims(), { key: stranger.privateKey }))).toBe(
      'The logout token signature is invalid.',
    );
    expect(await refusal(token(claims(), { header: { kid: 'unknown' } }))).toBe(
      'The logout token is signed with an unknown key.',
    );
  });

  it('refuses alg none, HS256 and garbage', async () => {
    const unsigned = `${segment({ alg: 'none' })}.${segment(claims())}.`;
    expect(await refusal(unsigned)).toMatch(/algorithm that is not accepted/);
    expect(await refusal(`${segment({ alg: 'HS256' })}.${segment(claims())}.c2ln`)).toMatch(
      /algorithm that is not accepted/,
    );
    for (const garbage of ['', 'a', 'a.b.c', '....', `${segment([1])}.${segment(claims())}.x`]) {
      expect(await refusal(garbage)).toBe('The logout token is malformed.');
    }
  });

  it('refuses another issuer, another audience, or an audience shared with another client', async () => {
    expect(await refusal(token(claims({ iss: 'https://evil.example.test' })))).toBe(
      "The logout token's iss claim does not pass.",
    );
    expect(await refusal(token(claims({ aud: 'another-client' })))).toBe(
      "The logout token's aud claim does not pass.",
    );
    expect(await refusal(token(claims({ aud: [clientId, 'another-client'] })))).toBe(
      "The logout token's aud claim does not pass.",
    );
    expect(await refusal(token(claims({ azp: 'another-client' })))).toBe(
      "The logout token's azp claim does not pass.",
    );
  });

  it('refuses a token without iat, too old, issued in the future or expired', async () => {
    expect(await refusal(token(without('iat')))).toBe('The logout token has no iat claim.');
    expect(await refusal(token(claims({ iat: now() - 306, exp: now() + 60 })))).toBe(
      'The logout token is too old (iat).',
    );
    expect(await refusal(token(claims({ iat: now() + 60, exp: now() + 120 })))).toBe(
      "The logout token's iat claim does not pass.",
    );
    expect(await refusal(token(claims({ iat: now() - 60, exp: now() - 10 })))).toBe(
      'The logout token has expired.',
    );
    // Within the window and the clock tolerance: accepted.
    const recent = token(claims({ iat: now() - 300 }));
    await expect(verifyLogoutToken(recent, published, rules)).resolves.toBeTruthy();
  });

  it.each([
    ['missing', undefined],
    ['not an object', 'logout'],
    ['without the back-channel member', { 'http://example.test/other': {} }],
    ['whose member is not an object', { [BACKCHANNEL_LOGOUT_EVENT]: true }],
    ['whose member is an array', { [BACKCHANNEL_LOGOUT_EVENT]: [] }],
  ])('refuses events %s', async (_name, events) => {
    const payload = events === undefined ? without('events') : claims({ events });
    expect(await refusal(token(payload))).toMatch(/events/);
  });

  it('refuses a token with a nonce (an ID token is never a logout token)', async () => {
    expect(await refusal(token(claims({ nonce: 'n-1' })))).toBe(
      'The logout token carries a nonce.',
    );
  });

  it('refuses a token that names neither sid nor sub, or carries them malformed', async () => {
    expect(await refusal(token(without('sub', without('sid'))))).toBe(
      'The logout token names neither a session (sid) nor a subject (sub).',
    );
    expect(await refusal(token(claims({ sid: 42 })))).toBe(
      "The logout token's sid claim is malformed.",
    );
    expect(await refusal(token(claims({ sub: '' })))).toBe(
      "The logout token's sub claim is malformed.",
    );
  });

  it('refuses a token without jti, or with one out of bounds', async () => {
    expect(await refusal(token(without('jti')))).toBe('The logout token has no jti claim.');
    expect(await refusal(token(claims({ jti: 'x'.repeat(256) })))).toBe(
      "The logout token's jti claim is malformed.",
    );
  });

  it('refuses a token typed as another kind of token', async () => {
    expect(await refusal(token(claims(), { header: { typ: 'at+jwt' } }))).toBe(
      'The token is not a logout token (typ).',
    );
  });

  it('answers IDENTITY_UNAVAILABLE when the keys cannot be fetched, without judging the token', async () => {
    const unreachable: JWTVerifyGetKey = async () => {
      throw new GatewayError('IDENTITY_UNAVAILABLE', 'keys unreachable');
    };
    await expect(verifyLogoutToken(token(), unreachable, rules)).rejects.toMatchObject({
      code: 'IDENTITY_UNAVAILABLE',
    });
  });
});
