import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  Browser,
  formsOf,
  gatewayClient,
  machineClient,
  signInAndExchange,
  startAuthorization,
  startDevIdentity,
  testAudience,
  tokenRequest,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity();
});
afterAll(() => identity.close());

const prod = () => identity.issuer('PROD');

describe('client_credentials', () => {
  it('issues a JWT access token for the audience with the requested machine scopes', async () => {
    const { status, body } = await tokenRequest(prod(), machineClient, {
      grant_type: 'client_credentials',
      scope: 'platforms:admin onboarding:schema:read',
      resource: testAudience,
    });
    expect(status).toBe(200);
    const token = body.access_token as string;
    expect(decodeProtectedHeader(token).alg).toBe('EdDSA');
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${prod()}/jwks`)), {
      issuer: prod(),
      audience: testAudience,
    });
    expect(payload).toMatchObject({
      client_id: machineClient.clientId,
      scope: 'platforms:admin onboarding:schema:read',
    });
    expect(payload).not.toHaveProperty('email');
    expect(payload.sub === undefined || payload.sub === machineClient.clientId).toBe(true);
  });

  it('refuses another resource and scopes the client may not request', async () => {
    const otherResource = await tokenRequest(prod(), machineClient, {
      grant_type: 'client_credentials',
      scope: 'platforms:admin',
      resource: 'https://elsewhere.example',
    });
    expect(otherResource.status).toBe(400);
    expect(otherResource.body.error).toBe('invalid_target');
    const userScope = await tokenRequest(prod(), machineClient, {
      grant_type: 'client_credentials',
      scope: 'openid email',
      resource: testAudience,
    });
    expect(userScope.status).toBe(400);
    expect(userScope.body.error).toBe('invalid_scope');
  });

  it('refuses a wrong client secret', async () => {
    const { status, body } = await tokenRequest(
      prod(),
      { ...machineClient, clientSecret: 'not-the-secret-at-all' },
      { grant_type: 'client_credentials', scope: 'platforms:admin', resource: testAudience },
    );
    expect(status).toBe(401);
    expect(body.error).toBe('invalid_client');
  });

  it('issues an opaque token without resource (spec 5: the gateway rejects it)', async () => {
    const { status, body } = await tokenRequest(prod(), machineClient, {
      grant_type: 'client_credentials',
      scope: 'platforms:admin',
    });
    expect(status).toBe(200);
    expect(String(body.access_token).split('.')).toHaveLength(1);
  });
});

describe('RP-initiated logout (end_session_endpoint)', () => {
  it('with id_token_hint, post_logout_redirect_uri and state: ends the session and returns with state', async () => {
    const { browser, tokens } = await signInAndExchange({
      issuer: prod(),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const postLogout = gatewayClient.postLogoutRedirectUris[0] as string;
    const endSession = new URL(`${prod()}/session/end`);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: postLogout,
      state: 'encrypted-destination',
      client_id: gatewayClient.clientId,
    }).toString();
    const confirm = await browser.get(endSession.href);
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain('<h1>Sign out</h1>');
    expect(page).toContain('You are signed in as <strong>alice@example.com</strong>');
    // The gateway's logout needs no second click: the page submits itself.
    expect(page).toContain("document.getElementById('op.logoutForm').submit();");
    expect(page).toMatch(/<input type="hidden" form="op.logoutForm" name="logout" value="yes"/);
    const form = formsOf(page, endSession.href).get('confirm');
    expect(form?.fields.xsrf).toBeTruthy();

    const done = await browser.post(form?.action ?? '', { ...form?.fields, logout: 'yes' });
    expect([302, 303]).toContain(done.status);
    const back = new URL(done.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(postLogout);
    expect(back.searchParams.get('state')).toBe('encrypted-destination');

    // The identity session is gone: the next authorization asks to sign in again.
    const again = await startAuthorization(browser, { issuer: prod() });
    expect(again.response.status).toBe(200);
    expect(await again.response.text()).toContain('<h1>Sign in</h1>');
  });

  it('without id_token_hint: asks for confirmation without submitting itself', async () => {
    const { browser } = await signInAndExchange({
      issuer: prod(),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const response = await browser.get(`${prod()}/session/end`);
    const page = await response.text();
    expect(page).toContain('<h1>Sign out</h1>');
    expect(page).not.toContain('<script>');
    const form = formsOf(page, `${prod()}/session/end`).get('confirm');
    const done = await browser.post(form?.action ?? '', { ...form?.fields, logout: 'yes' });
    const success = await browser.follow(form?.action ?? '', done);
    expect(await success.response.text()).toContain('You are signed out.');
  });

  it('refuses a post_logout_redirect_uri the client did not register', async () => {
    const { tokens } = await signInAndExchange({
      issuer: prod(),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const response = await new Browser().get(
      `${prod()}/session/end?${new URLSearchParams({
        id_token_hint: tokens.id_token as string,
        post_logout_redirect_uri: 'https://evil.example/',
      })}`,
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('post_logout_redirect_uri not registered');
  });
});
