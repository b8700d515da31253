import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  Browser,
  formsOf,
  gatewayClient,
  isRedirectUri,
  signInAndExchange,
  startAuthorization,
  startDevIdentity,
  submitAndFollow,
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
const partner = () => identity.issuer('PARTNER');

async function discovery(issuer: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

function verify(token: string, issuer: string, audience: string) {
  return jwtVerify(token, createRemoteJWKSet(new URL(`${issuer}/jwks`)), { issuer, audience });
}

describe('discovery', () => {
  it('publishes one issuer per environment under /api/auth/env/<KEY>', async () => {
    for (const key of ['PROD', 'PARTNER']) {
      const issuer = `${identity.origin}/api/auth/env/${key}`;
      expect(identity.issuer(key)).toBe(issuer);
      const document = await discovery(issuer);
      expect(document).toMatchObject({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/oauth2/token`,
        jwks_uri: `${issuer}/jwks`,
        userinfo_endpoint: `${issuer}/me`,
        end_session_endpoint: `${issuer}/session/end`,
        code_challenge_methods_supported: ['S256'],
      });
      expect(document.scopes_supported).toEqual(
        expect.arrayContaining([
          'openid',
          'profile',
          'email',
          'offline_access',
          'platforms:admin',
          'onboarding:schema:read',
          'onboarding:schema:write',
        ]),
      );
      expect(document.claims_supported).toEqual(
        expect.arrayContaining(['sub', 'email', 'email_verified', 'name', 'picture']),
      );
      expect(document.id_token_signing_alg_values_supported).toContain('EdDSA');
    }
  });

  it('publishes public EdDSA keys only', async () => {
    const response = await fetch(`${prod()}/jwks`);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(key).not.toHaveProperty('d');
    }
  });

  it('answers 404 for an environment it does not have', async () => {
    const response = await fetch(
      `${identity.origin}/api/auth/env/NOPE/.well-known/openid-configuration`,
    );
    expect(response.status).toBe(404);
  });
});

describe('authorization code flow through the sign-in page', () => {
  it('signs in, returns code and state to the redirect_uri, and issues an EdDSA ID token and a JWT access token', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, {
      issuer: prod(),
      resource: testAudience,
    });
    expect(started.response.status).toBe(200);
    expect(new URL(started.url).pathname).toMatch(/^\/api\/auth\/env\/PROD\/interaction\/[\w-]+$/);
    expect(started.response.headers.get('content-security-policy')).toContain(
      "frame-ancestors 'none'",
    );
    const page = await started.response.text();
    expect(page).toContain('<h1>Sign in</h1>');
    expect(page).toContain('Deployment (PROD)');
    const login = formsOf(page, started.url).get('login');
    expect(login).toBeDefined();
    expect(Object.keys(login?.fields ?? {})).toEqual(['email', 'password']);

    const result = await submitAndFollow(
      browser,
      { url: started.url, page, redirectUri: started.redirectUri },
      'login',
      { email: 'alice@example.com', password: 'alice-password' },
    );
    expect(result.callback).toBeDefined();
    const callback = result.callback as URL;
    expect(`${callback.origin}${callback.pathname}`).toBe(gatewayClient.redirectUris[0]);
    expect(callback.searchParams.get('state')).toBe(started.state);
    const code = callback.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const { status, body } = await tokenRequest(prod(), gatewayClient, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: started.redirectUri,
      code_verifier: started.verifier,
    });
    expect(status).toBe(200);
    const idToken = body.id_token as string;
    expect(decodeProtectedHeader(idToken).alg).toBe('EdDSA');
    const { payload: claims } = await verify(idToken, prod(), gatewayClient.clientId);
    expect(claims).toMatchObject({
      email: 'alice@example.com',
      email_verified: true,
      name: 'Alice Example',
      picture: 'https://example.com/alice.png',
      nonce: started.nonce,
    });
    expect(claims.sub).toMatch(/^[0-9a-f-]{36}$/);

    const accessToken = body.access_token as string;
    expect(decodeProtectedHeader(accessToken).alg).toBe('EdDSA');
    const { payload: access } = await verify(accessToken, prod(), testAudience);
    expect(access).toMatchObject({
      sub: claims.sub,
      aud: testAudience,
      client_id: gatewayClient.clientId,
      email: 'alice@example.com',
      email_verified: true,
    });
    expect(String(access.scope).split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));
  });

  it('refuses an authorization request without PKCE', async () => {
    const url = new URL(`${prod()}/auth`);
    url.search = new URLSearchParams({
      client_id: gatewayClient.clientId,
      response_type: 'code',
      redirect_uri: gatewayClient.redirectUris[0] as string,
      scope: 'openid',
      state: 'some-state',
    }).toString();
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(response.headers.get('location') ?? '', url);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('shows an error and stays on the page for a wrong password or an unknown address', async () => {
    for (const attempt of [
      { email: 'alice@example.com', password: 'not-her-password' },
      { email: 'nobody@example.com', password: 'whatever-password' },
    ]) {
      const browser = new Browser();
      const started = await startAuthorization(browser, { issuer: prod() });
      const page = await started.response.text();
      const login = formsOf(page, started.url).get('login');
      const response = await browser.post(login?.action ?? '', attempt);
      expect(response.status).toBe(401);
      expect(response.headers.get('location')).toBeNull();
      const again = await response.text();
      expect(again).toContain('The e-mail address or the password is not correct.');
      expect(again).toContain(`value="${attempt.email}"`);
      expect(again).not.toContain(attempt.password);
      // The same interaction still accepts the right password.
      if (attempt.email === 'alice@example.com') {
        const result = await submitAndFollow(
          browser,
          { url: started.url, page: again, redirectUri: started.redirectUri },
          'login',
          { email: 'alice@example.com', password: 'alice-password' },
        );
        expect(result.callback?.searchParams.get('code')).toBeTruthy();
      }
    }
  });

  it('refuses a suspended account with a clear message', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, { issuer: prod() });
    const result = await submitAndFollow(
      browser,
      { url: started.url, page: await started.response.text(), redirectUri: started.redirectUri },
      'login',
      { email: 'carol@example.com', password: 'carol-password' },
    );
    expect(result.callback).toBeUndefined();
    expect(result.response.status).toBe(403);
    expect(await result.response.text()).toContain('This account is suspended');
  });

  it('escapes what the user typed', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, { issuer: prod() });
    const login = formsOf(await started.response.text(), started.url).get('login');
    const response = await browser.post(login?.action ?? '', {
      email: '"><script>alert(1)</script>',
      password: 'x',
    });
    const page = await response.text();
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;');
  });

  it('skips the sign-in page when the browser already has an identity session', async () => {
    const { browser } = await signInAndExchange({
      issuer: prod(),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const again = await startAuthorization(browser, {
      issuer: prod(),
      extra: { screen_hint: 'signup' },
    });
    expect(isRedirectUri(new URL(again.url), again.redirectUri)).toBe(true);
    expect(new URL(again.url).searchParams.get('code')).toBeTruthy();
  });

  it('cancelling returns access_denied to the client', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, { issuer: prod() });
    const result = await submitAndFollow(
      browser,
      { url: started.url, page: await started.response.text(), redirectUri: started.redirectUri },
      'abort',
      {},
    );
    expect(result.callback?.searchParams.get('error')).toBe('access_denied');
    expect(result.callback?.searchParams.get('state')).toBe(started.state);
  });

  it('refuses a form posted without the interaction cookie (another browser)', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, { issuer: prod() });
    const login = formsOf(await started.response.text(), started.url).get('login');
    const response = await new Browser().post(login?.action ?? '', {
      email: 'alice@example.com',
      password: 'alice-password',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('This sign-in is no longer valid');
  });
});

describe('environments are separate', () => {
  it('gives the same e-mail address a different subject in each environment', async () => {
    const inProd = await signInAndExchange({
      issuer: prod(),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const inPartner = await signInAndExchange({
      issuer: partner(),
      email: 'alice@example.com',
      password: 'alice-partner-password',
    });
    const prodClaims = (await verify(inProd.tokens.id_token as string, prod(), 'gateway')).payload;
    const partnerClaims = (await verify(inPartner.tokens.id_token as string, partner(), 'gateway'))
      .payload;
    expect(prodClaims.email).toBe(partnerClaims.email);
    expect(prodClaims.sub).not.toBe(partnerClaims.sub);
    expect(partnerClaims.name).toBe('Alice at Partner');
  });

  it("checks a password against that environment's account only", async () => {
    await expect(
      signInAndExchange({
        issuer: partner(),
        email: 'alice@example.com',
        password: 'alice-password',
      }),
    ).rejects.toThrow(/Sign-in failed: 401/);
    await expect(
      signInAndExchange({ issuer: partner(), email: 'bob@example.com', password: 'bob-password' }),
    ).rejects.toThrow(/Sign-in failed: 401/);
  });
});
