import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 4.6 and 4.7: logoutUrl is null when the environment has no end-session endpoint (the
// session is revoked all the same), and logged-out without a state falls back to
// ACCOUNT_CENTER_URL.
let t: GatewayUnderTest;
let provider: TestOpenIdProvider;
let key: IssuedKey;

beforeAll(async () => {
  t = await startGatewayUnderTest({ ACCOUNT_CENTER_URL: 'http://localhost:3000/account-center' });
  provider = await startTestOpenIdProvider({
    environmentKey: 'NOEND',
    omitEndSessionEndpoint: true,
  });
  const gatewayClient = provider.clients.find((client) => client.clientId === 'test-gateway');
  await t.call('POST', '/v1/identity-environments', {
    body: {
      environmentKey: 'NOEND',
      displayName: 'No end session',
      tier: 'development',
      issuer: provider.issuer,
      oidcClientId: 'test-gateway',
      oidcClientSecret: gatewayClient?.clientSecret,
    },
  });
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'NOEND_APP',
      displayName: 'No end session app',
      identityEnvironmentKey: 'NOEND',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/cb',
          isDefault: true,
        },
      ],
    },
  });
  key = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
});

afterAll(async () => {
  await t.close();
  await provider.close();
});

describe('logout without an identity end-session endpoint', () => {
  it('answers logoutUrl null, clears the cookie and revokes the session', async () => {
    const steps = loginSteps(t);
    const { landed } = await steps.signIn(provider, 'NOEND_APP', '/');
    const exchanged = await steps.exchange(key, handoffCodeOf(landed.location));
    const token = (exchanged.body.session as { gatewayToken: string }).gatewayToken;
    expect(sessionCookieOf(landed.headers).token).toBe(token);
    const logout = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: {
        cookie: `svc_auth_session=${encodeURIComponent(token)}`,
        origin: 'http://localhost:3000',
      },
    });
    expect(logout.status).toBe(200);
    expect(logout.body).toEqual({ logoutUrl: null });
    expect(logout.headers.getSetCookie().join(';')).toMatch(/svc_auth_session=;.*Max-Age=0/i);
    expect((await steps.introspect(key, token)).body).toEqual({ active: false });
  });

  it('sends a logged-out request without a state to ACCOUNT_CENTER_URL', async () => {
    const answer = await loginSteps(t).browserGet('/v1/auth/logged-out');
    expect(answer.status).toBe(302);
    expect(answer.location).toBe('http://localhost:3000/account-center');
  });
});
