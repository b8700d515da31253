import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { DevAccount } from './dev-identity-options.js';
import {
  Browser,
  formsOf,
  gatewayClient,
  startAuthorization,
  startDevIdentity,
  submitAndFollow,
  tokenRequest,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

const saved: DevAccount[][] = [];
let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity({
    accountStore: {
      load: async () => undefined,
      save: async (accounts) => {
        saved.push(structuredClone(accounts));
      },
    },
  });
});
afterAll(() => identity.close());

const prod = () => identity.issuer('PROD');

async function registrationPage(browser: Browser) {
  const started = await startAuthorization(browser, {
    issuer: prod(),
    extra: { screen_hint: 'signup' },
  });
  expect(started.response.status).toBe(200);
  return { started, page: await started.response.text() };
}

describe('registration (screen_hint=signup)', () => {
  it('shows the registration page instead of sign-in, with a link to switch', async () => {
    const browser = new Browser();
    const { started, page } = await registrationPage(browser);
    expect(page).toContain('<h1>Create an account</h1>');
    const register = formsOf(page, started.url).get('register');
    expect(Object.keys(register?.fields ?? {})).toEqual([
      'email',
      'name',
      'password',
      'passwordConfirmation',
    ]);
    expect(page).toContain(`href="${new URL(started.url).pathname}?screen=login"`);

    const signIn = await browser.get(`${started.url}?screen=login`);
    expect(await signIn.text()).toContain('<h1>Sign in</h1>');
    const back = await browser.get(`${started.url}?screen=signup`);
    expect(await back.text()).toContain('<h1>Create an account</h1>');
  });

  it('creates an active, verified account with a random UUID subject and completes the flow', async () => {
    const browser = new Browser();
    const { started, page } = await registrationPage(browser);
    const result = await submitAndFollow(
      browser,
      { url: started.url, page, redirectUri: started.redirectUri },
      'register',
      {
        email: 'dave@example.com',
        name: 'Dave New',
        password: 'dave-password',
        passwordConfirmation: 'dave-password',
      },
    );
    expect(result.callback?.searchParams.get('state')).toBe(started.state);
    const { status, body } = await tokenRequest(prod(), gatewayClient, {
      grant_type: 'authorization_code',
      code: result.callback?.searchParams.get('code') ?? '',
      redirect_uri: started.redirectUri,
      code_verifier: started.verifier,
    });
    expect(status).toBe(200);
    const { payload } = await jwtVerify(
      body.id_token as string,
      createRemoteJWKSet(new URL(`${prod()}/jwks`)),
      { issuer: prod(), audience: gatewayClient.clientId },
    );
    expect(payload).toMatchObject({
      email: 'dave@example.com',
      email_verified: true,
      name: 'Dave New',
      nonce: started.nonce,
    });
    expect(payload.sub).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );

    expect(identity.service.accounts('PROD')).toContainEqual({
      environmentKey: 'PROD',
      subject: payload.sub,
      email: 'dave@example.com',
      emailVerified: true,
      name: 'Dave New',
      status: 'active',
    });
    expect(identity.service.accounts('PARTNER').map((a) => a.email)).not.toContain(
      'dave@example.com',
    );
    // Saved through the account store, with a scrypt hash and never the password.
    const stored = saved.at(-1)?.find((account) => account.email === 'dave@example.com');
    expect(stored?.passwordHash).toMatch(/^scrypt\$/);
    expect(stored).not.toHaveProperty('password');
    expect(JSON.stringify(saved)).not.toContain('dave-password');
  });

  it('shows what is wrong and keeps the typed values', async () => {
    const cases = [
      {
        fields: {
          email: 'not-an-address',
          password: 'long-enough',
          passwordConfirmation: 'long-enough',
        },
        message: 'Enter a valid e-mail address.',
        status: 400,
      },
      {
        fields: { email: 'erin@example.com', password: 'short', passwordConfirmation: 'short' },
        message: 'The password needs at least 8 characters.',
        status: 400,
      },
      {
        fields: {
          email: 'erin@example.com',
          password: 'long-enough',
          passwordConfirmation: 'different',
        },
        message: 'The two passwords are not the same.',
        status: 400,
      },
      {
        fields: {
          email: 'Alice@Example.com',
          password: 'long-enough',
          passwordConfirmation: 'long-enough',
        },
        message: 'An account with this e-mail address already exists.',
        status: 409,
      },
    ];
    for (const { fields, message, status } of cases) {
      const browser = new Browser();
      const { started, page } = await registrationPage(browser);
      const register = formsOf(page, started.url).get('register');
      const response = await browser.post(register?.action ?? '', { name: 'Erin', ...fields });
      expect(response.status).toBe(status);
      const again = await response.text();
      expect(again).toContain(message);
      expect(again).toContain('<h1>Create an account</h1>');
      expect(again).toContain('value="Erin"');
    }
    expect(identity.service.accounts('PROD').map((a) => a.email)).not.toContain('erin@example.com');
  });

  it('lets the same address register in another environment as a separate account', async () => {
    const browser = new Browser();
    const started = await startAuthorization(browser, {
      issuer: identity.issuer('PARTNER'),
      extra: { screen_hint: 'signup' },
    });
    const result = await submitAndFollow(
      browser,
      { url: started.url, page: await started.response.text(), redirectUri: started.redirectUri },
      'register',
      { email: 'bob@example.com', password: 'bob-partner', passwordConfirmation: 'bob-partner' },
    );
    expect(result.callback?.searchParams.get('code')).toBeTruthy();
    const prodBob = identity.service.accounts('PROD').find((a) => a.email === 'bob@example.com');
    const partnerBob = identity.service
      .accounts('PARTNER')
      .find((a) => a.email === 'bob@example.com');
    expect(partnerBob?.subject).toBeDefined();
    expect(partnerBob?.subject).not.toBe(prodBob?.subject);
  });
});
