import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import {
  createTestSigningKey,
  startTestOpenIdProvider,
  startTestTokenIssuer,
  type TestOpenIdProvider,
  type TestTokenIssuer,
} from '@gateway/testkit';
import { SignJWT, generateKeyPair } from 'jose';
import {
  createAccessTokenVerifier,
  type AccessTokenVerifier,
  type IssuerInfo,
} from './access-token-verifier.js';
import { createDiscoveryCache } from './discovery-cache.js';
import { createJwksCache } from './jwks-cache.js';

const audience = 'http://localhost:8080';
const now = () => Math.floor(Date.now() / 1000);

// The gateway's view of its identity environments: issuer → environment.
const environments = new Map<string, IssuerInfo>();
function environment(issuer: string, key: string, extra: Partial<IssuerInfo> = {}): void {
  environments.set(issuer, {
    issuer,
    environmentKey: key,
    deployment: key === 'PROD',
    active: true,
    ...extra,
  });
}

function newVerifier(options: { cooldownMs?: number } = {}): AccessTokenVerifier {
  return createAccessTokenVerifier({
    audience,
    resolveIssuer: async (iss) => environments.get(iss),
    discovery: createDiscoveryCache({ timeoutMs: 2_000 }),
    jwks: createJwksCache({ timeoutMs: 2_000, cooldownMs: options.cooldownMs ?? 0 }),
  });
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

async function unauthorized(promise: Promise<unknown>, message?: string): Promise<void> {
  const error = await rejection(promise);
  expect(error.code).toBe('UNAUTHORIZED');
  expect(error.status).toBe(401);
  if (message !== undefined) expect(error.message).toBe(message);
}

let prod: TestOpenIdProvider;
let edProvider: TestOpenIdProvider;
let ecProvider: TestOpenIdProvider;
let attacker: TestTokenIssuer;
let verifier: AccessTokenVerifier;

beforeAll(async () => {
  [prod, edProvider, ecProvider, attacker] = await Promise.all([
    startTestOpenIdProvider({
      extraClaims: (clientId, kind) =>
        kind === 'machine' && clientId === 'shop-backend' ? { svc_platform: 'shop' } : {},
      clients: [
        {
          clientId: 'gateway',
          clientSecret: 'gateway-secret',
          redirectUris: ['http://localhost:8080/v1/auth/callback'],
          postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
        },
        {
          clientId: 'admin-robot',
          clientSecret: 'robot-secret',
          redirectUris: [],
          postLogoutRedirectUris: [],
          scopes: ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'],
        },
        {
          clientId: 'shop-backend',
          clientSecret: 'shop-secret',
          redirectUris: [],
          postLogoutRedirectUris: [],
          scopes: ['onboarding:schema:read'],
        },
      ],
      accounts: [{ accountId: 'alice', email: 'alice@example.test', emailVerified: true }],
    }),
    startTestOpenIdProvider({ signingAlg: 'EdDSA', environmentKey: 'STAGING' }),
    startTestOpenIdProvider({ signingAlg: 'ES256', environmentKey: 'DEV' }),
    startTestTokenIssuer({ alg: 'ES256' }),
  ]);
  environment(prod.issuer, 'PROD');
  environment(edProvider.issuer, 'STAGING');
  environment(ecProvider.issuer, 'DEV');
  environment(attacker.issuer, 'SANDBOX');
  verifier = newVerifier();
});
afterAll(() =>
  Promise.all([prod.close(), edProvider.close(), ecProvider.close(), attacker.close()]),
);

describe('access tokens of a real provider', () => {
  it('verifies a machine token: kind, scopes, client, deployment', async () => {
    const token = await prod.machineToken({ clientId: 'admin-robot' });
    const verified = await verifier.verify(token);
    expect(verified).toMatchObject({
      kind: 'machine',
      issuer: prod.issuer,
      environmentKey: 'PROD',
      deployment: true,
      clientId: 'admin-robot',
      email: undefined,
      emailVerified: false,
      scopes: ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'],
      platformKey: undefined,
    });
    expect(verified.claims.aud).toBe(audience);
  });

  it('reads the platform a machine token is limited to (svc_platform)', async () => {
    const token = await prod.machineToken({ clientId: 'shop-backend' });
    expect(await verifier.verify(token)).toMatchObject({
      kind: 'machine',
      clientId: 'shop-backend',
      scopes: ['onboarding:schema:read'],
      platformKey: 'shop',
    });
  });

  it('verifies a user token from a real code flow: subject and email', async () => {
    const { accessToken } = await prod.userTokens({ accountId: 'alice' });
    expect(await verifier.verify(accessToken)).toMatchObject({
      kind: 'user',
      environmentKey: 'PROD',
      deployment: true,
      subject: 'alice',
      clientId: 'gateway',
      email: 'alice@example.test',
      emailVerified: true,
      scopes: ['openid', 'profile', 'email'],
    });
  });

  it('refuses a token for another audience', async () => {
    const token = await prod.machineToken({
      clientId: 'admin-robot',
      resource: 'https://other-api.example',
    });
    await unauthorized(
      verifier.verify(token),
      'The access token is not meant for this gateway (audience).',
    );
  });

  it('refuses an ID token', async () => {
    const { idToken } = await prod.userTokens({ accountId: 'alice', nonce: 'n-1' });
    await unauthorized(verifier.verify(idToken));
  });

  it.each([
    ['EdDSA', () => edProvider, 'STAGING'],
    ['ES256', () => ecProvider, 'DEV'],
  ])('verifies %s tokens of another environment', async (_alg, provider, key) => {
    const token = await provider().machineToken();
    expect(await verifier.verify(token)).toMatchObject({
      kind: 'machine',
      environmentKey: key,
      deployment: false,
      clientId: 'test-machine',
    });
    const { accessToken } = await provider().userTokens({ accountId: 'user-1' });
    expect(await verifier.verify(accessToken)).toMatchObject({ kind: 'user', subject: 'user-1' });
  });

  it('refuses a token of an unknown issuer', async () => {
    const stranger = await startTestOpenIdProvider({
      signingAlg: 'ES256',
      environmentKey: 'STRANGER',
    });
    try {
      const token = await stranger.machineToken();
      await unauthorized(
        verifier.verify(token),
        "The access token's issuer is not an active identity environment.",
      );
    } finally {
      await stranger.close();
    }
  });

  it('refuses a token of an inactive environment', async () => {
    const token = await ecProvider.machineToken();
    environment(ecProvider.issuer, 'DEV', { active: false });
    try {
      await unauthorized(
        verifier.verify(token),
        "The access token's issuer is not an active identity environment.",
      );
    } finally {
      environment(ecProvider.issuer, 'DEV');
    }
  });

  it.each(['', 'not-a-jwt', 'a.b.c', 'eyJhbGciOiJub25lIn0.e30.'])(
    'refuses %j as not a JWT or without issuer',
    async (token) => {
      await unauthorized(verifier.verify(token));
    },
  );

  it('answers IDENTITY_UNAVAILABLE when the provider cannot be reached', async () => {
    const gone = await startTestOpenIdProvider({ signingAlg: 'ES256', environmentKey: 'GONE' });
    const token = await gone.machineToken();
    environment(gone.issuer, 'GONE');
    await gone.close();
    const error = await rejection(newVerifier().verify(token));
    expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    expect(error.status).toBe(503);
  });
});

describe('crafted tokens (an issuer whose keys the test holds)', () => {
  const claims = (extra: Record<string, unknown> = {}) => ({
    aud: audience,
    sub: 'robot',
    client_id: 'robot',
    scope: 'onboarding:schema:read',
    ...extra,
  });

  it('verifies a well-formed token', async () => {
    expect(await verifier.verify(await attacker.sign(claims()))).toMatchObject({
      kind: 'machine',
      environmentKey: 'SANDBOX',
      subject: 'robot',
      scopes: ['onboarding:schema:read'],
    });
  });

  it('refuses an expired token, and accepts one within the clock tolerance', async () => {
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ exp: now() - 60 }))),
      'The access token has expired.',
    );
    expect(await verifier.verify(await attacker.sign(claims({ exp: now() - 2 })))).toMatchObject({
      subject: 'robot',
    });
  });

  it('refuses a token that is not valid yet', async () => {
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ nbf: now() + 60 }))),
      'The access token is not valid yet.',
    );
  });

  it('refuses a token without expiry', async () => {
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ exp: undefined }))),
      'The access token has no valid expiry.',
    );
  });

  it('refuses a token issued in the future beyond the clock tolerance', async () => {
    expect(await verifier.verify(await attacker.sign(claims({ iat: now() + 2 })))).toMatchObject({
      subject: 'robot',
    });
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ iat: now() + 365 * 86_400 }))),
      'The access token is issued in the future.',
    );
  });

  it('refuses a token that lives longer than the configured maximum (default one day)', async () => {
    expect(
      await verifier.verify(await attacker.sign(claims({ iat: now(), exp: now() + 86_400 }))),
    ).toMatchObject({ subject: 'robot' });
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ iat: now(), exp: now() + 10 * 365 * 86_400 }))),
      'The access token lives longer than this gateway accepts.',
    );
    // Without iat the lifetime counts from now.
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ iat: undefined, exp: now() + 2 * 86_400 }))),
      'The access token lives longer than this gateway accepts.',
    );
  });

  it('honours a configured maximum lifetime', async () => {
    const strict = createAccessTokenVerifier({
      audience,
      resolveIssuer: async (iss) => environments.get(iss),
      discovery: createDiscoveryCache({ timeoutMs: 2_000 }),
      jwks: createJwksCache({ timeoutMs: 2_000, cooldownMs: 0 }),
      maxLifetimeSeconds: 600,
    });
    expect(
      await strict.verify(await attacker.sign(claims({ iat: now(), exp: now() + 600 }))),
    ).toMatchObject({ subject: 'robot' });
    await unauthorized(
      strict.verify(await attacker.sign(claims({ iat: now(), exp: now() + 3_600 }))),
      'The access token lives longer than this gateway accepts.',
    );
  });

  it('accepts the access token types (at+jwt, application/at+jwt, JWT, none) and refuses others', async () => {
    for (const typ of ['at+jwt', 'application/at+jwt', 'JWT', 'AT+JWT']) {
      expect(await verifier.verify(await attacker.sign(claims(), { typ }))).toMatchObject({
        subject: 'robot',
      });
    }
    for (const typ of ['logout+jwt', 'secevent+jwt', 'application/logout+jwt']) {
      await unauthorized(
        verifier.verify(await attacker.sign(claims(), { typ })),
        'The token is not an access token (typ).',
      );
    }
  });

  it('refuses a token with a nonce (an ID token) even for the right audience', async () => {
    await unauthorized(
      verifier.verify(await attacker.sign(claims({ nonce: 'n' }))),
      'ID tokens are not accepted as access tokens.',
    );
  });

  it('refuses HS256 signed with the public key material as secret', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(attacker.key.publicJwk));
    const token = await new SignJWT({ ...claims(), iss: attacker.issuer, exp: now() + 60 })
      .setProtectedHeader({ alg: 'HS256', kid: attacker.key.kid })
      .sign(secret);
    await unauthorized(
      verifier.verify(token),
      'The access token is signed with an algorithm that is not accepted.',
    );
  });

  it('refuses PS256', async () => {
    const { privateKey } = await generateKeyPair('PS256');
    const token = await new SignJWT({ ...claims(), iss: attacker.issuer, exp: now() + 60 })
      .setProtectedHeader({ alg: 'PS256', kid: attacker.key.kid })
      .sign(privateKey);
    await unauthorized(
      verifier.verify(token),
      'The access token is signed with an algorithm that is not accepted.',
    );
  });

  it('refuses a token signed by another key that claims a published kid', async () => {
    const forger = await createTestSigningKey('ES256', { kid: attacker.key.kid });
    await unauthorized(
      verifier.verify(await attacker.sign(claims(), { key: forger })),
      'The access token signature is invalid.',
    );
  });

  it('refuses a token whose kid is not published (after fetching the JWKS again)', async () => {
    const stranger = await createTestSigningKey('ES256');
    const before = attacker.jwksRequests();
    await unauthorized(
      newVerifier().verify(await attacker.sign(claims(), { key: stranger })),
      'The access token is signed with an unknown key.',
    );
    // First fetch, then one more for the unknown kid.
    expect(attacker.jwksRequests() - before).toBe(2);
  });

  it('does not refetch for unknown kids during the cooldown', async () => {
    const cooled = newVerifier({ cooldownMs: 60_000 });
    await cooled.verify(await attacker.sign(claims()));
    const before = attacker.jwksRequests();
    const stranger = await createTestSigningKey('ES256');
    await unauthorized(cooled.verify(await attacker.sign(claims(), { key: stranger })));
    expect(attacker.jwksRequests()).toBe(before);
  });

  it('verifies a token without kid, trying each published key of its algorithm', async () => {
    const original = attacker.key;
    const second = await createTestSigningKey('ES256');
    attacker.publish([original, second]);
    try {
      const fresh = newVerifier();
      expect(await fresh.verify(await attacker.sign(claims(), { kid: null }))).toMatchObject({
        subject: 'robot',
      });
      expect(
        await fresh.verify(await attacker.sign(claims(), { key: second, kid: null })),
      ).toMatchObject({ subject: 'robot' });
      const forger = await createTestSigningKey('ES256');
      await unauthorized(
        fresh.verify(await attacker.sign(claims(), { key: forger, kid: null })),
        'The access token signature is invalid.',
      );
    } finally {
      attacker.publish([original]);
    }
  });

  it('follows key rotation: a token of the new key makes it fetch the JWKS again', async () => {
    const rotating = await startTestTokenIssuer({ alg: 'RS256', path: '/rotating' });
    environment(rotating.issuer, 'ROTATING');
    try {
      const fresh = newVerifier();
      const keyA = rotating.key;
      await fresh.verify(await rotating.sign(claims()));
      expect(rotating.jwksRequests()).toBe(1);
      // Still served from memory.
      await fresh.verify(await rotating.sign(claims()));
      expect(rotating.jwksRequests()).toBe(1);

      const keyB = await createTestSigningKey('RS256');
      rotating.publish([keyB]);
      expect(await fresh.verify(await rotating.sign(claims(), { key: keyB }))).toMatchObject({
        environmentKey: 'ROTATING',
      });
      expect(rotating.jwksRequests()).toBe(2);
      // Key A is gone from the provider: its tokens stop verifying.
      await unauthorized(fresh.verify(await rotating.sign(claims(), { key: keyA })));
    } finally {
      await rotating.close();
    }
  });

  it('refuses a token whose iss differs from the environment the resolver returned', async () => {
    const token = await attacker.sign(claims({ iss: 'https://alias.example' }));
    environments.set('https://alias.example', environments.get(attacker.issuer) as IssuerInfo);
    try {
      await unauthorized(verifier.verify(token), "The access token's issuer does not match.");
    } finally {
      environments.delete('https://alias.example');
    }
  });

  it.each([
    [{ sub: 'robot', azp: 'robot', client_id: undefined }, 'machine', 'robot'],
    [{ sub: undefined, client_id: 'robot' }, 'machine', 'robot'],
    [{ sub: 'someone', client_id: 'robot' }, 'user', 'robot'],
    [{ sub: 'robot', email: 'robot@example.test' }, 'user', 'robot'],
    [{ sub: 'u-1', client_id: undefined, azp: 'spa' }, 'user', 'spa'],
  ])('classifies %j as %s', async (extra, kind, clientId) => {
    expect(await verifier.verify(await attacker.sign(claims(extra)))).toMatchObject({
      kind,
      clientId,
    });
  });

  it('reads platform_key and an unverified email', async () => {
    const verified = await verifier.verify(
      await attacker.sign(
        claims({ sub: 'u-2', email: 'u2@example.test', email_verified: 'true', platform_key: 'p' }),
      ),
    );
    expect(verified).toMatchObject({
      kind: 'user',
      email: 'u2@example.test',
      emailVerified: false,
      platformKey: 'p',
    });
  });

  it.each([
    [{ sub: undefined, email: 'x@example.test' }, 'The access token has no subject.'],
    [{ scope: ['a', 'b'] }, "The access token's scope claim is malformed."],
    [{ sub: 42 }, "The access token's sub claim is malformed."],
    [{ email: 7 }, "The access token's email claim is malformed."],
  ])('refuses malformed claims %j', async (extra, message) => {
    await unauthorized(verifier.verify(await attacker.sign(claims(extra))), message);
  });

  it('answers IDENTITY_UNAVAILABLE when the JWKS cannot be fetched', async () => {
    const closing = await startTestTokenIssuer({ path: '/closing' });
    environment(closing.issuer, 'CLOSING');
    // The discovery document is read (and cached) while the provider is up; then it goes.
    const discovery = createDiscoveryCache({ timeoutMs: 2_000 });
    await discovery.get(closing.issuer);
    const token = await closing.sign(claims());
    await closing.close();
    const error = await rejection(
      createAccessTokenVerifier({
        audience,
        resolveIssuer: async (iss) => environments.get(iss),
        discovery,
        jwks: createJwksCache({ timeoutMs: 2_000 }),
      }).verify(token),
    );
    expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    expect(error.message).toBe("The identity provider's signing keys could not be fetched.");
  });
});
