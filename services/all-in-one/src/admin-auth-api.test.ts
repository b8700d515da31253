import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startTestOpenIdProvider,
  testMachineScopes,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 5: who may call the admin API, with real tokens from real OpenID Providers.
let t: GatewayUnderTest;
let staging: TestOpenIdProvider;
let stranger: TestOpenIdProvider;

const machine = (clientId: string, scopes: string[]) => ({
  clientId,
  clientSecret: randomBytes(24).toString('base64url'),
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes,
});

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      clients: [
        {
          clientId: 'test-gateway',
          clientSecret: randomBytes(24).toString('base64url'),
          redirectUris: ['http://localhost:8080/v1/auth/callback'],
          postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
        },
        machine('test-machine', [...testMachineScopes]),
        machine('limited-machine', [...testMachineScopes]),
      ],
      extraClaims: (clientId) => (clientId === 'limited-machine' ? { svc_platform: 'SHOP' } : {}),
    },
  );
  staging = await startTestOpenIdProvider({ environmentKey: 'STAGING' });
  stranger = await startTestOpenIdProvider({ environmentKey: 'STRANGER' });
  const created = await t.call('POST', '/v1/identity-environments', {
    body: {
      environmentKey: 'STAGING',
      displayName: 'Staging',
      tier: 'staging',
      issuer: staging.issuer,
      oidcClientId: 'test-gateway',
    },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await t.close();
  await staging.close();
  await stranger.close();
});

describe('admin authentication', () => {
  it('answers 401 UNAUTHORIZED without credentials, asking for a Bearer token', async () => {
    const { status, headers, body } = await t.call('GET', '/v1/platforms', { token: null });
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
    expect(headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('answers 401 for a token that is not a JWT, an ID token, or a token from an unknown issuer', async () => {
    expect((await t.call('GET', '/v1/platforms', { token: 'not-a-jwt' })).status).toBe(401);
    const { idToken } = await t.provider.userTokens({ accountId: 'user-1', nonce: 'n-1' });
    expect((await t.call('GET', '/v1/platforms', { token: idToken })).status).toBe(401);
    const foreign = await stranger.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('GET', '/v1/platforms', { token: foreign })).status).toBe(401);
  });

  it('accepts a deployment machine token with platforms:admin', async () => {
    const token = await t.provider.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('GET', '/v1/platforms', { token })).status).toBe(200);
  });

  it('answers 403 FORBIDDEN for a deployment machine token without the scope', async () => {
    const token = await t.provider.machineToken({ scope: 'onboarding:schema:read' });
    const { status, body } = await t.call('GET', '/v1/platforms', { token });
    expect(status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
  });

  it('answers 403 for a machine token limited to one platform by svc_platform', async () => {
    const token = await t.provider.machineToken({
      clientId: 'limited-machine',
      scope: 'platforms:admin',
    });
    expect((await t.call('GET', '/v1/platforms', { token })).status).toBe(403);
  });

  it('never grants permissions to another environment, even with the scope (spec 2.6)', async () => {
    const token = await staging.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('GET', '/v1/platforms', { token })).status).toBe(403);
  });

  it('refuses tokens of an environment once it is deactivated (401)', async () => {
    const token = await staging.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('DELETE', '/v1/identity-environments/STAGING')).status).toBe(200);
    // The edge that made the change forgets its cached issuer resolutions at once (other
    // instances catch up within their 30 s cache).
    const { status, body } = await t.call('GET', '/v1/platforms', { token });
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
  });

  it('answers 403 for a deployment user token of a user without the platform_admin role', async () => {
    const { accessToken } = await t.provider.userTokens({ accountId: 'user-1' });
    expect((await t.call('GET', '/v1/platforms', { token: accessToken })).status).toBe(403);
  });
});
