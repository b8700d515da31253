import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DevIdentityService } from '@gateway/dev-identity';
import { unusedLocalPort } from '@gateway/testkit';
import {
  startInternalIdentityService,
  type InternalIdentityService,
} from './testing/internal-identity-service.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// Spec 2.5, 3.3, 3.8, 4.8 (account) and 5 (user authentication) over real HTTP: the account
// API against PostgreSQL, a real OpenID Provider for sign-in and user tokens, and a real
// development identity service for the internal users API (spec 4.15).

const ALLOWED_ORIGIN = 'http://localhost:3000';
const accounts = ['user-1', 'bob', 'carol'].map((accountId) => ({
  accountId,
  email: `${accountId}@example.test`,
  emailVerified: true,
}));

let t: GatewayUnderTest;
let identity: DevIdentityService;
let internal: InternalIdentityService;
let shopKey: IssuedKey;

const cookieOf = (token: string) => `svc_auth_session=${encodeURIComponent(token)}`;

async function userToken(accountId: string): Promise<string> {
  return (await t.provider.userTokens({ accountId })).accessToken;
}

/** A fresh browser session of user-1 (the account loginSteps signs in). */
async function signIn(): Promise<string> {
  const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
  expect(landed.status).toBe(302);
  return sessionCookieOf(landed.headers).token;
}

function localUser(subject: string) {
  return t.db.knex('authflow.users').where({ issuer: t.provider.issuer, subject });
}

async function statusOf(subject: string): Promise<string | undefined> {
  const row = (await localUser(subject).first('status')) as { status: string } | undefined;
  return row?.status;
}

const devAccount = (subject: string) =>
  identity.accounts('PROD').find((account) => account.subject === subject);

beforeAll(async () => {
  internal = await startInternalIdentityService();
  identity = internal.identity;
  t = await startGatewayUnderTest(internal.env, { accounts });
  const platform = await t.call('POST', '/v1/platforms', {
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
      ],
    },
  });
  expect(platform.status).toBe(201);
  shopKey = (platform.body.credentials as IssuedKey[])[0] as IssuedKey;
});

afterAll(async () => {
  await t.close();
  await internal.close();
});

describe('user authentication (spec 5)', () => {
  it('answers 401 without credentials', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await t.call(method, '/v1/account/me', { token: null });
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe('UNAUTHORIZED');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('refuses machine tokens with 403, also next to a valid cookie', async () => {
    const session = await signIn();
    for (const method of ['GET', 'DELETE']) {
      const answer = await t.call(method, '/v1/account/me', {
        headers: { cookie: cookieOf(session), origin: ALLOWED_ORIGIN },
      });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('FORBIDDEN');
    }
    expect(await statusOf('user-1')).toBe('ACTIVE');
  });

  it('answers 401 for an invalid token, an unknown cookie and a revoked session', async () => {
    expect((await t.call('GET', '/v1/account/me', { token: 'not.a.jwt' })).status).toBe(401);
    const unknown = await t.call('GET', '/v1/account/me', {
      token: null,
      headers: { cookie: cookieOf('gst_unknown') },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('UNAUTHORIZED');

    const session = await signIn();
    const cookie = cookieOf(session);
    expect(
      (await t.call('GET', '/v1/account/me', { token: null, headers: { cookie } })).status,
    ).toBe(200);
    const logout = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: { cookie, origin: ALLOWED_ORIGIN },
    });
    expect(logout.status).toBe(200);
    const revoked = await t.call('GET', '/v1/account/me', { token: null, headers: { cookie } });
    expect(revoked.status).toBe(401);
    expect(revoked.body.code).toBe('UNAUTHORIZED');
  });
});

describe('GET /v1/account/me (getMyIdentity)', () => {
  it('answers the account view for a cookie session', async () => {
    const session = await signIn();
    const answer = await t.call('GET', '/v1/account/me', {
      token: null,
      headers: { cookie: cookieOf(session) },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const row = (await localUser('user-1').first('id')) as { id: string };
    expect(answer.body).toEqual({
      id: row.id,
      issuer: t.provider.issuer,
      subject: 'user-1',
      environment: { key: 'PROD', tier: 'development' },
      email: 'user-1@example.test',
      emailVerified: true,
      status: 'ACTIVE',
      accountManagementUrl: `${new URL(t.provider.issuer).origin}/account`,
    });
  });

  it('answers the account view for a user Bearer token (provisioned on first use)', async () => {
    const answer = await t.call('GET', '/v1/account/me', { token: await userToken('carol') });
    expect(answer.status).toBe(200);
    const row = (await localUser('carol').first('id')) as { id: string };
    expect(answer.body).toMatchObject({
      id: row.id,
      subject: 'carol',
      email: 'carol@example.test',
      environment: { key: 'PROD', tier: 'development' },
      status: 'ACTIVE',
    });
  });
});

describe('DELETE /v1/account/me (deleteMyAccount)', () => {
  it('refuses a cookie write without an allowlisted Origin (403) and changes nothing', async () => {
    const session = await signIn();
    const cookie = cookieOf(session);
    const attempts: Record<string, string>[] = [
      { cookie },
      { cookie, origin: 'https://evil.example.test' },
    ];
    for (const headers of attempts) {
      const answer = await t.call('DELETE', '/v1/account/me', { token: null, headers });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('FORBIDDEN');
      expect(answer.headers.getSetCookie()).toEqual([]);
    }
    expect(await statusOf('user-1')).toBe('ACTIVE');
    expect((await loginSteps(t).introspect(shopKey, session)).body.active).toBe(true);
    expect(devAccount('user-1')?.status).toBe('active');
  });

  it('answers 503 IDENTITY_UNAVAILABLE when the identity service is down, and changes nothing', async () => {
    const down = await t.startAnother({
      IDENTITY_SERVICE_URL: `http://127.0.0.1:${await unusedLocalPort()}`,
    });
    try {
      const session = await signIn();
      const answer = await down.call('DELETE', '/v1/account/me', {
        token: null,
        headers: { cookie: cookieOf(session), origin: ALLOWED_ORIGIN },
      });
      expect(answer.status).toBe(503);
      expect(answer.body.code).toBe('IDENTITY_UNAVAILABLE');
      expect(answer.headers.getSetCookie()).toEqual([]);
      expect(await statusOf('user-1')).toBe('ACTIVE');
      expect((await loginSteps(t).introspect(shopKey, session)).body.active).toBe(true);
    } finally {
      await down.close();
    }
  });

  it('answers 503 IDENTITY_SERVICE_NOT_CONFIGURED without IDENTITY_SERVICE_URL, and changes nothing', async () => {
    const unconfigured = await t.startAnother({ IDENTITY_SERVICE_URL: '' });
    try {
      const answer = await unconfigured.call('DELETE', '/v1/account/me', {
        token: await userToken('carol'),
      });
      expect(answer.status).toBe(503);
      expect(answer.body.code).toBe('IDENTITY_SERVICE_NOT_CONFIGURED');
      expect(await statusOf('carol')).toBe('ACTIVE');
    } finally {
      await unconfigured.close();
    }
  });

  it('deletes a cookie-authenticated account: suspends the identity, soft-deletes, revokes and clears the cookie', async () => {
    const other = await signIn();
    const session = await signIn();
    const answer = await t.call('DELETE', '/v1/account/me', {
      token: null,
      headers: { cookie: cookieOf(session), origin: ALLOWED_ORIGIN },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers.getSetCookie().join(';')).toMatch(/^svc_auth_session=;.*Max-Age=0/i);
    expect(devAccount('user-1')?.status).toBe('suspended');
    expect(await statusOf('user-1')).toBe('SOFT_DELETED');
    for (const token of [session, other]) {
      expect((await loginSteps(t).introspect(shopKey, token)).body).toEqual({ active: false });
      const after = await t.call('GET', '/v1/account/me', {
        token: null,
        headers: { cookie: cookieOf(token) },
      });
      expect(after.status).toBe(401);
    }
  });

  it('refuses a later login of the deleted user with 403 ACCOUNT_DELETED', async () => {
    // The identity provider of the test still signs user-1 in; the gateway refuses it.
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    expect(landed.status).toBe(403);
    expect((JSON.parse(landed.text) as { code: string }).code).toBe('ACCOUNT_DELETED');
    const token = await userToken('user-1');
    const bearer = await t.call('GET', '/v1/account/me', { token });
    expect(bearer.status).toBe(403);
    expect(bearer.body.code).toBe('ACCOUNT_DELETED');
  });

  it('deletes a Bearer-authenticated account the identity service does not know, without a cookie change', async () => {
    const token = await userToken('bob');
    expect((await t.call('GET', '/v1/account/me', { token })).status).toBe(200);
    const answer = await t.call('DELETE', '/v1/account/me', { token });
    expect(answer.status).toBe(204);
    expect(answer.headers.getSetCookie()).toEqual([]);
    expect(await statusOf('bob')).toBe('SOFT_DELETED');
    const again = await t.call('GET', '/v1/account/me', { token });
    expect(again.status).toBe(403);
    expect(again.body.code).toBe('ACCOUNT_DELETED');
  });
});
