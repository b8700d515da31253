import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  basicAuthorization,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 4.1-4.7: the whole journey over real HTTP, against PostgreSQL and real OpenID
// Providers, as a browser and a platform backend see it.
let t: GatewayUnderTest;
let partner: TestOpenIdProvider;
type Issued = IssuedKey;
const basic = basicAuthorization;
let shopKeys: { web: Issued; admin: Issued; backend: Issued };
let partnerKey: Issued;

beforeAll(async () => {
  t = await startGatewayUnderTest({ ACCOUNT_CENTER_URL: 'http://localhost:3000/account-center' });
  partner = await startTestOpenIdProvider({ environmentKey: 'PARTNER' });
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/auth/callback',
          isDefault: true,
        },
        {
          label: 'admin',
          returnUrl: 'http://localhost:4000/admin',
          callbackUrl: 'http://localhost:4000/admin/callback',
          isDefault: false,
        },
      ],
    },
  });
  const [web, admin] = created.body.credentials as Issued[];
  const backend = await t.call('POST', '/v1/platforms/SHOP/credentials', {
    body: { kind: 'backend' },
  });
  shopKeys = {
    web: web as Issued,
    admin: admin as Issued,
    backend: (backend.body.credentials as Issued[])[0] as Issued,
  };

  const gatewayClient = partner.clients.find((client) => client.clientId === 'test-gateway');
  await t.call('POST', '/v1/identity-environments', {
    body: {
      environmentKey: 'PARTNER',
      displayName: 'Partner',
      tier: 'development',
      issuer: partner.issuer,
      oidcClientId: 'test-gateway',
      oidcClientSecret: gatewayClient?.clientSecret,
    },
  });
  const partnerPlatform = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'PARTNER_APP',
      displayName: 'Partner app',
      identityEnvironmentKey: 'PARTNER',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:5000/',
          callbackUrl: 'http://localhost:5000/cb',
          isDefault: true,
        },
      ],
    },
  });
  partnerKey = (partnerPlatform.body.credentials as Issued[])[0] as Issued;
});

afterAll(async () => {
  await t.close();
  await partner.close();
});

const steps = () => loginSteps(t);
const browserGet = (path: string, cookie?: string) => steps().browserGet(path, cookie);
const signIn = (provider: TestOpenIdProvider, platformKey: string, returnTo: string) =>
  steps().signIn(provider, platformKey, returnTo);
const exchange = (key: Issued, code: string) => steps().exchange(key, code);
const introspect = (key: Issued, token: string) => steps().introspect(key, token);

describe('the sign-in journey', () => {
  let gatewayToken = '';
  let code = '';

  it('starts with a redirect to the identity provider carrying PKCE, state and nonce (spec 4.1)', async () => {
    const start = await browserGet(
      '/v1/auth/start?platformKey=SHOP&returnTo=%2Forders%3Fpage%3D2&defaultScreen=up',
    );
    expect(start.status).toBe(302);
    const authorize = new URL(start.location ?? '');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${t.provider.issuer}/auth`);
    const query = Object.fromEntries(authorize.searchParams);
    expect(query).toMatchObject({
      client_id: 'test-gateway',
      redirect_uri: 'http://localhost:8080/v1/auth/callback',
      response_type: 'code',
      scope: 'openid profile email',
      code_challenge_method: 'S256',
      screen_hint: 'signup',
    });
    expect(query.state?.length).toBeGreaterThanOrEqual(43);
    expect(query.nonce?.length).toBeGreaterThanOrEqual(43);
    expect(query.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only hashes of state and nonce are stored.
    const stored = JSON.stringify(await t.db.knex('authflow.transactions').select('*'));
    expect(stored).not.toContain(query.state);
    expect(stored).not.toContain(query.nonce);
  });

  it('lands on the platform callback with a handoff code and sets the session cookie (spec 4.2)', async () => {
    const { landed } = await signIn(t.provider, 'SHOP', '/orders');
    expect(landed.status).toBe(302);
    const target = new URL(landed.location ?? '');
    expect(`${target.origin}${target.pathname}`).toBe('http://localhost:3000/auth/callback');
    code = target.searchParams.get('code') ?? '';
    // The session's slot tag, the random part, then the session's lookup key (slot-tags.ts);
    // within the 200 characters of spec 8.
    expect(code).toMatch(/^handoff_([0-9a-f]{8})\.[A-Za-z0-9_-]{43}\.\1\.[A-Za-z0-9_-]{43}$/);
    expect(code.length).toBeLessThanOrEqual(200);
    const cookie = sessionCookieOf(landed.headers);
    expect(cookie.attributes).toMatch(/HttpOnly/i);
    expect(cookie.attributes).toMatch(/Path=\//i);
    expect(cookie.attributes).toMatch(/SameSite=Lax/i);
    expect(cookie.attributes).not.toMatch(/Secure/i);
    gatewayToken = cookie.token;
  });

  it('exchanges the code with the key of the pair whose callback got it, once: a used code answers 404 to that key too (spec 2.9, 3.2, 4.4)', async () => {
    // A key of another pair cannot redeem it; the code stays for its own key.
    expect((await exchange(shopKeys.admin, code)).status).toBe(404);
    expect((await exchange(shopKeys.backend, code)).status).toBe(403);
    const { status, body, headers } = await exchange(shopKeys.web, code);
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(body).toMatchObject({
      session: { gatewayToken },
      user: { sub: 'user-1', issuer: t.provider.issuer },
      platform: { key: 'SHOP' },
      environment: { key: 'PROD', tier: 'development' },
      onboarding: {
        status: 'COMPLETE',
        requirementVersion: 0,
        missingFields: [],
        canCompleteCentrally: false,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
      permissions: [],
      returnTo: 'http://localhost:3000/orders',
    });
    expect(JSON.stringify(body)).not.toMatch(/eyJ[A-Za-z0-9_-]+\./); // no identity token anywhere
    // Spec 2.9: "Atomically single-use"; 3.2: "used or expired | exchange | any | 404"; 4.4:
    // "invalid, expired, used or wrong-platform code: 404".
    const again = await exchange(shopKeys.web, code);
    expect({ status: again.status, code: again.body.code }).toEqual({
      status: 404,
      code: 'NOT_FOUND',
    });
    expect((await exchange(shopKeys.admin, code)).status).toBe(404);
  });

  it('introspects the session for its own platform only (spec 4.5)', async () => {
    const active = await introspect(shopKeys.backend, gatewayToken);
    expect(active.status).toBe(200);
    expect(active.headers.get('cache-control')).toBe('no-store');
    expect(active.body).toMatchObject({
      active: true,
      platformKey: 'SHOP',
      user: {
        subject: 'user-1',
        issuer: t.provider.issuer,
        email: 'user-1@example.test',
        emailVerified: true,
        status: 'ACTIVE',
      },
      environment: { key: 'PROD', tier: 'development' },
    });
    expect((await introspect(partnerKey, gatewayToken)).body).toEqual({ active: false });
    expect((await introspect(shopKeys.backend, 'not-a-session')).body).toEqual({ active: false });
  });

  it('introspects the session of a suspended or deleted user as inactive (spec 4.5)', async () => {
    // SUSPENDED has no API transition (spec 3.8), so both statuses are written directly.
    const users = () =>
      t.db.knex('authflow.users').where({ subject: 'user-1', issuer: t.provider.issuer });
    for (const status of ['SUSPENDED', 'SOFT_DELETED']) {
      await users().update({ status });
      expect((await introspect(shopKeys.backend, gatewayToken)).body).toEqual({ active: false });
    }
    await users().update({ status: 'ACTIVE' });
    expect((await introspect(shopKeys.backend, gatewayToken)).body).toMatchObject({ active: true });
  });

  it('logs out: revokes, clears the cookie and sends the browser through the identity end-session (spec 4.6, 4.7)', async () => {
    const cookie = `svc_auth_session=${encodeURIComponent(gatewayToken)}`;
    const refused = await t.call('POST', '/v1/auth/logout', { token: null, headers: { cookie } });
    expect(refused.status).toBe(403);
    const { status, body, headers } = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: { cookie, origin: 'http://localhost:3000' },
    });
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.getSetCookie().join(';')).toMatch(/svc_auth_session=;.*Max-Age=0/i);
    const logoutUrl = new URL(String(body.logoutUrl));
    expect(logoutUrl.searchParams.get('client_id')).toBe('test-gateway');
    expect(logoutUrl.searchParams.get('post_logout_redirect_uri')).toBe(
      'http://localhost:8080/v1/auth/logged-out',
    );
    expect(logoutUrl.searchParams.get('id_token_hint')).toMatch(/^eyJ/);
    expect((await introspect(shopKeys.backend, gatewayToken)).body).toEqual({ active: false });

    const back = await t.provider.browser().endSession(logoutUrl.href);
    expect(`${back.origin}${back.pathname}`).toBe('http://localhost:8080/v1/auth/logged-out');
    const loggedOut = await browserGet(`/v1/auth/logged-out${back.search}`);
    expect(loggedOut.status).toBe(302);
    expect(loggedOut.location).toBe('http://localhost:3000/');

    const again = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: { cookie, origin: 'http://localhost:3000' },
    });
    expect(again.body).toEqual({ logoutUrl: null });
  });

  it('sends a tampered logout state to ACCOUNT_CENTER_URL', async () => {
    const loggedOut = await browserGet('/v1/auth/logged-out?state=v1.k1.tampered');
    expect(loggedOut.location).toBe('http://localhost:3000/account-center');
  });

  it('gives the same e-mail in another identity environment another local user', async () => {
    const prod = await signIn(t.provider, 'SHOP', '/');
    const prodCode = new URL(prod.landed.location ?? '').searchParams.get('code') ?? '';
    const prodUser = (await exchange(shopKeys.web, prodCode)).body.user as { id: string };
    const other = await signIn(partner, 'PARTNER_APP', '/');
    const otherCode = new URL(other.landed.location ?? '').searchParams.get('code') ?? '';
    const result = await exchange(partnerKey, otherCode);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      user: { sub: 'user-1', issuer: partner.issuer },
      environment: { key: 'PARTNER' },
    });
    expect((result.body.user as { id: string }).id).not.toBe(prodUser.id);
  });
});

describe('what the login refuses', () => {
  it.each([
    ['an unknown platform', 'platformKey=NOPE&returnTo=%2F', 404, 'NOT_FOUND'],
    [
      'a malformed returnTo',
      'platformKey=SHOP&returnTo=%2F%2Fevil.example',
      400,
      'INVALID_REDIRECT',
    ],
    [
      'an unregistered returnTo',
      'platformKey=SHOP&returnTo=https%3A%2F%2Fevil.example%2F',
      403,
      'FORBIDDEN',
    ],
    [
      'another onboarding mode',
      'platformKey=SHOP&returnTo=%2F&onboardingMode=platform',
      403,
      'FORBIDDEN',
    ],
    ['a missing returnTo', 'platformKey=SHOP', 400, 'VALIDATION_ERROR'],
  ])('start refuses %s', async (_name, query, status, code) => {
    const response = await browserGet(`/v1/auth/start?${query}`);
    expect(response.status).toBe(status);
    expect(JSON.parse(response.text).code).toBe(code);
  });

  it('callback refuses an unknown state, a reused state, a refused code and an IdP error', async () => {
    expect((await browserGet('/v1/auth/callback?code=x&state=unknown')).status).toBe(404);
    const { callbackQuery } = await signIn(t.provider, 'SHOP', '/');
    expect((await browserGet(`/v1/auth/callback${callbackQuery}`)).status).toBe(404);

    const start = await browserGet('/v1/auth/start?platformKey=SHOP&returnTo=%2F');
    const state = new URL(start.location ?? '').searchParams.get('state') ?? '';
    const iss = encodeURIComponent(t.provider.issuer);
    const refused = await browserGet(`/v1/auth/callback?code=forged&state=${state}&iss=${iss}`);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text).code).toBe('AUTHORIZATION_CODE_EXCHANGE_FAILED');

    const cancelled = await browserGet('/v1/auth/callback?error=access_denied&state=whatever');
    expect(cancelled.status).toBe(400);
    expect(JSON.parse(cancelled.text).code).toBe('VALIDATION_ERROR');
  });

  it('exchange refuses bad credentials (401), a non-JSON body (415) and a malformed code (400)', async () => {
    const bad = await t.call('POST', '/v1/auth/exchange', {
      token: null,
      headers: {
        authorization: `Basic ${Buffer.from(`${shopKeys.web.clientId}:wrong`).toString('base64')}`,
      },
      body: { code: 'handoff_x' },
    });
    expect(bad.status).toBe(401);
    const form = await t.call('POST', '/v1/auth/exchange', {
      token: null,
      headers: { authorization: basic(shopKeys.web), 'content-type': 'text/plain' },
      rawBody: 'handoff_x',
    });
    expect(form.status).toBe(415);
    expect((await exchange(shopKeys.web, 'not-a-handoff')).status).toBe(400);
  });

  it('resume needs the session cookie (401)', async () => {
    expect(
      (await browserGet('/v1/auth/resume?transaction=00000000-0000-4000-8000-000000000000')).status,
    ).toBe(401);
  });
});
