import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { verifyJwt, type JwtVerifyOptions } from './jwt-verify.js';

type Alg = 'RS256' | 'ES256' | 'EdDSA';

const pairs: Record<Alg, { privateKey: KeyObject; publicKey: KeyObject }> = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: generateKeyPairSync('ed25519'),
};
const weakRsa = generateKeyPairSync('rsa', { modulusLength: 1024 });

const jwk = (alg: Alg | 'RS256-weak', kid: string) => ({
  ...(alg === 'RS256-weak' ? weakRsa : pairs[alg]).publicKey.export({ format: 'jwk' }),
  kid,
  use: 'sig',
});
const keySet = createLocalJWKSet({
  keys: [jwk('RS256', 'rsa'), jwk('ES256', 'ec'), jwk('EdDSA', 'ed'), jwk('RS256-weak', 'weak')],
});

const issuer = 'https://id.example.test/api/auth/env/dev';
const audience = 'client-1';
const options: JwtVerifyOptions = {
  issuer,
  audience,
  algorithms: ['EdDSA', 'RS256', 'ES256'],
  clockTolerance: 5,
  requiredClaims: ['sub', 'exp', 'iat'],
};
const now = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer,
  aud: audience,
  sub: 'user-1',
  nonce: 'n-1',
  iat: now(),
  exp: now() + 300,
  ...extra,
});
const kids: Record<Alg, string> = { RS256: 'rsa', ES256: 'ec', EdDSA: 'ed' };
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS signed with node:crypto, with any header and claims. */
function token(
  alg: Alg,
  payload: Record<string, unknown> = claims(),
  header: Record<string, unknown> = {},
  options: { key?: KeyObject; dsaEncoding?: 'der' | 'ieee-p1363' } = {},
): string {
  const input = `${segment({ alg, kid: kids[alg], ...header })}.${segment(payload)}`;
  const key = options.key ?? pairs[alg].privateKey;
  const signature = sign(
    alg === 'EdDSA' ? null : 'sha256',
    Buffer.from(input),
    alg === 'ES256' ? { key, dsaEncoding: options.dsaEncoding ?? 'ieee-p1363' } : key,
  );
  return `${input}.${signature.toString('base64url')}`;
}

/** What jose's jwtVerify and verifyJwt each made of a token: the payload or the error class. */
async function outcomes(jwt: string, keys: JWTVerifyGetKey = keySet, opts = options) {
  const settle = (promise: Promise<{ payload: unknown }>) =>
    promise.then(
      ({ payload }) => ({ payload }),
      (error: unknown) => ({ error: (error as Error).constructor.name }),
    );
  return {
    jose: await settle(
      jwtVerify(jwt, keys, {
        ...opts,
        algorithms: [...opts.algorithms],
        requiredClaims: [...(opts.requiredClaims ?? [])],
      }),
    ),
    ours: await settle(verifyJwt(jwt, keys, opts)),
  };
}

async function expectAsJose(jwt: string, expected: unknown, keys: JWTVerifyGetKey = keySet) {
  const { jose, ours } = await outcomes(jwt, keys);
  expect(ours).toEqual(jose);
  expect(ours).toEqual(expected);
}

const rejected = (error: string) => ({ error });

describe('verifyJwt (node:crypto, the rules of jose jwtVerify)', () => {
  it.each(['RS256', 'ES256', 'EdDSA'] as const)('accepts a valid %s token', async (alg) => {
    const payload = claims({ email: 'a@example.test' });
    await expectAsJose(token(alg, payload), { payload });
  });

  it('verifies ES256 signatures in IEEE P1363 form (RFC 7518 3.4) and refuses DER', async () => {
    const payload = claims();
    const p1363 = token('ES256', payload);
    expect(Buffer.from(p1363.split('.')[2] ?? '', 'base64url')).toHaveLength(64);
    await expectAsJose(p1363, { payload });
    await expectAsJose(
      token('ES256', payload, {}, { dsaEncoding: 'der' }),
      rejected('JWSSignatureVerificationFailed'),
    );
  });

  it('refuses alg none and algorithms outside the list before asking for a key', async () => {
    let asked = 0;
    const keys: JWTVerifyGetKey = (header, jws) => {
      asked += 1;
      return keySet(header, jws);
    };
    const unsigned = `${segment({ alg: 'none' })}.${segment(claims())}.`;
    await expectAsJose(unsigned, rejected('JOSEAlgNotAllowed'), keys);
    const hs256 = `${segment({ alg: 'HS256' })}.${segment(claims())}.c2ln`;
    await expectAsJose(hs256, rejected('JOSEAlgNotAllowed'), keys);
    await expectAsJose(`${segment({})}.${segment(claims())}.c2ln`, rejected('JWSInvalid'), keys);
    expect(asked).toBe(0);
  });

  it('refuses a key whose type does not match the algorithm', async () => {
    // A key set that hands out the RSA key whatever the header says.
    const rsaOnly: JWTVerifyGetKey = async () => pairs.RS256.publicKey;
    const esHeaderRsaKey = token('ES256', claims(), { kid: 'rsa' });
    const { ours } = await outcomes(esHeaderRsaKey, rsaOnly);
    expect(ours).toEqual(rejected('TypeError'));
    // Through a key set, kid selection finds no key of that type.
    await expectAsJose(esHeaderRsaKey, rejected('JWKSNoMatchingKey'));
    // An EdDSA header naming the EC key, an RS256 header naming the Ed25519 key.
    await expectAsJose(token('EdDSA', claims(), { kid: 'ec' }), rejected('JWKSNoMatchingKey'));
    await expectAsJose(token('RS256', claims(), { kid: 'ed' }), rejected('JWKSNoMatchingKey'));
    // A private or secret key is never a verification key.
    const secret: JWTVerifyGetKey = async () => new Uint8Array(32);
    expect((await outcomes(token('RS256'), secret)).ours).toEqual(rejected('TypeError'));
  });

  it('refuses RSA keys shorter than 2048 bits', async () => {
    const weak = token('RS256', claims(), { kid: 'weak' }, { key: weakRsa.privateKey });
    await expectAsJose(weak, rejected('TypeError'));
  });

  it('refuses tampered signatures, payloads and headers', async () => {
    const [header, payload, signature] = token('RS256').split('.') as [string, string, string];
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    await expectAsJose(
      `${header}.${payload}.${flipped}`,
      rejected('JWSSignatureVerificationFailed'),
    );
    const otherPayload = segment(claims({ sub: 'user-2' }));
    await expectAsJose(
      `${header}.${otherPayload}.${signature}`,
      rejected('JWSSignatureVerificationFailed'),
    );
    const otherHeader = segment({ alg: 'RS256', kid: 'rsa', typ: 'JWT' });
    await expectAsJose(
      `${otherHeader}.${payload}.${signature}`,
      rejected('JWSSignatureVerificationFailed'),
    );
    await expectAsJose(`${header}.${payload}.${signature}!`, rejected('JWSInvalid'));
    await expectAsJose(`${header}.${payload}`, rejected('JWSInvalid'));
    await expectAsJose(`${header}.${payload}.${signature}.x`, rejected('JWSInvalid'));
    await expectAsJose(`e30.${payload}.${signature}`, rejected('JWSInvalid'));
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const [h, , s] = token(alg).split('.') as [string, string, string];
      await expectAsJose(`${h}.${otherPayload}.${s}`, rejected('JWSSignatureVerificationFailed'));
      await expectAsJose(`${h}.${otherPayload}.${s.slice(4)}`, {
        error: 'JWSSignatureVerificationFailed',
      });
    }
  });

  it('checks issuer, audience and the required claims', async () => {
    await expectAsJose(token('EdDSA', claims({ iss: `${issuer}/` })), {
      error: 'JWTClaimValidationFailed',
    });
    await expectAsJose(token('EdDSA', claims({ aud: 'client-2' })), {
      error: 'JWTClaimValidationFailed',
    });
    // Stricter than jose (OIDC Core 3.1.3.7): the client id alone, as a string or an array.
    const alone = claims({ aud: [audience] });
    await expectAsJose(token('EdDSA', alone), { payload: alone });
    for (const aud of [['client-2', audience], [audience, 'client-2'], [audience, audience], []]) {
      await expect(
        verifyJwt(token('EdDSA', claims({ aud })), keySet, options),
      ).rejects.toMatchObject({ claim: 'aud', reason: 'check_failed' });
    }
    for (const claim of ['sub', 'exp', 'iat', 'iss', 'aud']) {
      const rest: Record<string, unknown> = claims();
      delete rest[claim];
      await expectAsJose(token('EdDSA', rest), rejected('JWTClaimValidationFailed'));
      await expect(verifyJwt(token('EdDSA', rest), keySet, options)).rejects.toMatchObject({
        claim,
        reason: 'missing',
      });
    }
  });

  it('with authorizedParty, refuses an azp naming another party (jose has no such rule)', async () => {
    const idToken = { ...options, authorizedParty: audience };
    for (const extra of [{}, { azp: audience }]) {
      const payload = claims(extra);
      await expect(verifyJwt(token('EdDSA', payload), keySet, idToken)).resolves.toMatchObject({
        payload,
      });
    }
    for (const azp of ['client-2', '', [audience], 7]) {
      await expect(
        verifyJwt(token('EdDSA', claims({ azp })), keySet, idToken),
      ).rejects.toMatchObject({ claim: 'azp', reason: 'check_failed' });
    }
    // Without the option (access tokens), azp is the requesting client and not checked.
    const machine = claims({ azp: 'machine-client' });
    await expectAsJose(token('EdDSA', machine), { payload: machine });
  });

  it('refuses an iat in the future beyond the clock tolerance (jose does not)', async () => {
    const t = now();
    const soon = claims({ iat: t + 4 });
    await expect(verifyJwt(token('EdDSA', soon), keySet, options)).resolves.toMatchObject({
      payload: soon,
    });
    for (const iat of [t + 60, t + 86_400]) {
      await expect(
        verifyJwt(token('EdDSA', claims({ iat })), keySet, options),
      ).rejects.toMatchObject({ claim: 'iat', reason: 'check_failed' });
    }
  });

  it('checks exp, nbf and iat with the clock tolerance', async () => {
    const t = now();
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ exp: t - 4 }, 'ok'],
      [{ exp: t - 6 }, rejected('JWTExpired')],
      [{ exp: String(t + 60) }, rejected('JWTClaimValidationFailed')],
      [{ nbf: t + 4 }, 'ok'],
      [{ nbf: t + 60 }, rejected('JWTClaimValidationFailed')],
      [{ nbf: 'soon' }, rejected('JWTClaimValidationFailed')],
      [{ iat: t + 4 }, 'ok'],
      [{ iat: String(t) }, rejected('JWTClaimValidationFailed')],
    ];
    for (const [extra, expected] of cases) {
      const payload = claims(extra);
      await expectAsJose(token('ES256', payload), expected === 'ok' ? { payload } : expected);
    }
  });

  it('refuses claims that are not a JSON object and unknown critical extensions', async () => {
    const sign256 = (header: Record<string, unknown>, body: string) => {
      const input = `${segment({ alg: 'EdDSA', kid: 'ed', ...header })}.${Buffer.from(body).toString('base64url')}`;
      return `${input}.${sign(null, Buffer.from(input), pairs.EdDSA.privateKey).toString('base64url')}`;
    };
    await expectAsJose(sign256({}, '[1]'), rejected('JWTInvalid'));
    await expectAsJose(sign256({}, 'not json'), rejected('JWTInvalid'));
    const payload = claims();
    const body = JSON.stringify(payload);
    await expectAsJose(sign256({ crit: ['exp'], exp: 1 }, body), rejected('JOSENotSupported'));
    await expectAsJose(sign256({ crit: [] }, body), rejected('JWSInvalid'));
    await expectAsJose(sign256({ crit: ['b64'] }, body), rejected('JWSInvalid'));
    await expectAsJose(sign256({ crit: ['b64'], b64: true }, body), { payload });
  });

  it('throws jose error classes, so existing mappings keep working', async () => {
    await expect(verifyJwt(token('RS256', claims({ exp: 1 })), keySet, options)).rejects.toThrow(
      errors.JWTExpired,
    );
  });
});
