import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestOpenIdProvider, type TestOpenIdProvider } from './test-openid-provider.js';

async function discovery(provider: TestOpenIdProvider): Promise<Record<string, unknown>> {
  const response = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

async function jwks(provider: TestOpenIdProvider): Promise<{ keys: unknown[] }> {
  const uri = (await discovery(provider)).jwks_uri as string;
  const response = await fetch(uri);
  expect(response.status).toBe(200);
  return (await response.json()) as { keys: unknown[] };
}

function verifyWith(provider: TestOpenIdProvider, token: string, audience = provider.audience) {
  return jwtVerify(token, createLocalJWKSet({ keys: provider.signingKeys() }), {
    issuer: provider.issuer,
    audience,
  });
}

describe('startTestOpenIdProvider', () => {
  let provider: TestOpenIdProvider;
  beforeAll(async () => {
    provider = await startTestOpenIdProvider({
      extraClaims: (clientId, kind) =>
        clientId === 'test-machine' && kind === 'machine' ? { svc_platform: 'shop' } : {},
      accounts: [
        {
          accountId: 'alice',
          email: 'alice@example.test',
          emailVerified: true,
          name: 'Alice',
          picture: 'https://example.test/alice.png',
        },
      ],
    });
  });
  afterAll(() => provider.close());

  it('publishes discovery at its issuer, mounted under /api/auth/env/<KEY>', async () => {
    expect(provider.issuer).toBe(`${provider.origin}/api/auth/env/PROD`);
    expect(provider.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const document = await discovery(provider);
    expect(document).toMatchObject({
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer}/auth`,
      token_endpoint: `${provider.issuer}/oauth2/token`,
      end_session_endpoint: `${provider.issuer}/session/end`,
      jwks_uri: `${provider.issuer}/jwks`,
    });
    expect(document.code_challenge_methods_supported).toEqual(['S256']);
    expect((await jwks(provider)).keys).toEqual(provider.signingKeys());
    expect(provider.signingKeys()[0]).toMatchObject({ alg: 'RS256', use: 'sig', kty: 'RSA' });
    expect(provider.signingKeys()[0]).not.toHaveProperty('d');
  });

  it('answers 404 outside its mount path', async () => {
    const response = await fetch(`${provider.origin}/.well-known/openid-configuration`);
    expect(response.status).toBe(404);
  });

  it('issues machine tokens as JWTs for the audience, with scopes and client_id', async () => {
    const token = await provider.machineToken();
    const { payload, protectedHeader } = await verifyWith(provider, token);
    expect(protectedHeader.alg).toBe('RS256');
    expect(protectedHeader.kid).toBe(provider.signingKeys()[0]?.kid);
    expect(payload).toMatchObject({
      iss: provider.issuer,
      aud: provider.audience,
      client_id: 'test-machine',
      scope: 'platforms:admin onboarding:schema:read onboarding:schema:write',
      svc_platform: 'shop',
    });
    expect(payload).not.toHaveProperty('email');
    expect(payload.sub === undefined || payload.sub === 'test-machine').toBe(true);
  });

  it('issues machine tokens with a requested scope and for another resource', async () => {
    const token = await provider.machineToken({
      scope: 'onboarding:schema:read',
      resource: 'https://elsewhere.example',
    });
    const { payload } = await verifyWith(provider, token, 'https://elsewhere.example');
    expect(payload.scope).toBe('onboarding:schema:read');
  });

  it('refuses a client a scope outside its registered ones', async () => {
    await expect(provider.machineToken({ scope: 'email platforms:admin' })).rejects.toThrow(
      /invalid_scope/,
    );
  });

  it('runs a real code flow: user access token for the audience and an ID token', async () => {
    const { accessToken, idToken } = await provider.userTokens({ accountId: 'alice' });
    const access = await verifyWith(provider, accessToken);
    expect(access.payload).toMatchObject({
      sub: 'alice',
      aud: provider.audience,
      client_id: 'test-gateway',
      email: 'alice@example.test',
      email_verified: true,
    });
    expect(access.protectedHeader.typ).toBe('at+jwt');
    expect(access.payload).not.toHaveProperty('svc_platform');

    const id = await verifyWith(provider, idToken, 'test-gateway');
    expect(id.payload).toMatchObject({
      sub: 'alice',
      email: 'alice@example.test',
      name: 'Alice',
      picture: 'https://example.test/alice.png',
    });
    expect(id.payload).not.toHaveProperty('nonce');
  });

  it('puts the nonce it was sent in the ID token', async () => {
    const { idToken } = await provider.userTokens({ accountId: 'alice', nonce: 'n-123' });
    const { payload } = await verifyWith(provider, idToken, 'test-gateway');
    expect(payload.nonce).toBe('n-123');
  });

  it('fails the code flow for an unknown account', async () => {
    await expect(provider.userTokens({ accountId: 'nobody' })).rejects.toThrow();
  });
});

describe('startTestOpenIdProvider variants', () => {
  const providers: TestOpenIdProvider[] = [];
  afterAll(() => Promise.all(providers.map((provider) => provider.close())));
  const start = async (options: Parameters<typeof startTestOpenIdProvider>[0]) => {
    const provider = await startTestOpenIdProvider(options);
    providers.push(provider);
    return provider;
  };

  it('advertises another issuer', async () => {
    const provider = await start({
      advertisedIssuer: 'https://wrong.example',
      signingAlg: 'ES256',
    });
    expect((await discovery(provider)).issuer).toBe('https://wrong.example');
  });

  it('omits end_session_endpoint', async () => {
    const provider = await start({ omitEndSessionEndpoint: true, signingAlg: 'ES256' });
    const document = await discovery(provider);
    expect(document).not.toHaveProperty('end_session_endpoint');
    expect(document.token_endpoint).toBeDefined();
  });

  it('serves an empty JWKS', async () => {
    const provider = await start({ emptyJwks: true, signingAlg: 'ES256' });
    expect(await jwks(provider)).toEqual({ keys: [] });
    expect(provider.signingKeys()).toHaveLength(1);
  });

  it.each(['EdDSA', 'ES256'] as const)('signs with %s', async (signingAlg) => {
    const provider = await start({ signingAlg, environmentKey: 'STAGING' });
    expect(provider.issuer).toMatch(/\/api\/auth\/env\/STAGING$/);
    const token = await provider.machineToken();
    expect(decodeProtectedHeader(token).alg).toBe(signingAlg);
    await verifyWith(provider, token);
    const { idToken } = await provider.userTokens({ accountId: 'user-1' });
    expect(decodeProtectedHeader(idToken).alg).toBe(signingAlg);
  });

  it('issues opaque user access tokens on request, and still JWT machine tokens', async () => {
    const provider = await start({ userAccessTokenFormat: 'opaque', signingAlg: 'ES256' });
    const { accessToken, idToken } = await provider.userTokens({ accountId: 'user-1' });
    expect(accessToken.split('.')).toHaveLength(1);
    expect(accessToken.length).toBeGreaterThanOrEqual(32);
    expect((await verifyWith(provider, idToken, 'test-gateway')).payload.sub).toBe('user-1');
    await verifyWith(provider, await provider.machineToken());
  });
});
