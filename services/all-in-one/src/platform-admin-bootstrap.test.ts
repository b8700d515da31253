import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 2.6, 4.2 step 5 and 5 rule 5: PLATFORM_ADMIN_BOOTSTRAP_EMAILS grants platform_admin
// at a verified deployment login; the role's permissions then come with the user's tokens
// and sessions.
let t: GatewayUnderTest;
let key: IssuedKey;

beforeAll(async () => {
  t = await startGatewayUnderTest(
    { PLATFORM_ADMIN_BOOTSTRAP_EMAILS: 'someone@example.test, USER-1@example.test' },
    {
      accounts: [
        { accountId: 'user-1', email: 'user-1@example.test', emailVerified: true },
        { accountId: 'user-2', email: 'user-2@example.test', emailVerified: true },
      ],
    },
  );
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'CONSOLE',
      displayName: 'Console',
      // Only an admin console's sessions carry their user's permissions.
      adminConsole: true,
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
});

describe('platform_admin bootstrap', () => {
  it('a user token carries no permission before the user signs in', async () => {
    const { accessToken } = await t.provider.userTokens({ accountId: 'user-1' });
    expect((await t.call('GET', '/v1/platforms', { token: accessToken })).status).toBe(403);
  });

  it('grants the role at a verified deployment login, audits it, and snapshots it into the session', async () => {
    const steps = loginSteps(t);
    const { landed } = await steps.signIn(t.provider, 'CONSOLE', '/');
    const exchanged = await steps.exchange(key, handoffCodeOf(landed.location));
    expect(exchanged.body.permissions).toEqual([
      'platforms:admin',
      'onboarding:schema:read',
      'onboarding:schema:write',
    ]);
    const audit = await t.call('GET', '/v1/audit-records?kind=user_role.bootstrapped');
    expect(audit.body.items?.[0]).toMatchObject({
      kind: 'user_role.bootstrapped',
      targetType: 'user',
      targetKey: 'user-1@example.test',
    });
    // A second login grants nothing new.
    const again = await steps.signIn(t.provider, 'CONSOLE', '/');
    await steps.exchange(key, handoffCodeOf(again.landed.location));
    expect((await t.call('GET', '/v1/audit-records?kind=user_role.bootstrapped')).body.total).toBe(
      1,
    );
  });

  it("then the user's access token passes the admin API", async () => {
    const { accessToken } = await t.provider.userTokens({ accountId: 'user-1' });
    expect((await t.call('GET', '/v1/platforms', { token: accessToken })).status).toBe(200);
  });

  it('accepts the cookie session of a platform_admin on admin routes; writes need an allowlisted Origin (spec 5)', async () => {
    const steps = loginSteps(t);
    const admin = await steps.signIn(t.provider, 'CONSOLE', '/', 'user-1');
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(admin.landed.headers).token)}`;
    const read = await t.call('GET', '/v1/platforms', { token: null, headers: { cookie } });
    expect(read.status).toBe(200);
    const body = {
      platformKey: 'COOKIE_MADE',
      displayName: 'Made with a cookie',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/cookie/',
          callbackUrl: 'http://localhost:3000/cookie/cb',
          isDefault: true,
        },
      ],
    };
    const noOrigin = await t.call('POST', '/v1/platforms', {
      token: null,
      headers: { cookie },
      body,
    });
    expect(noOrigin.status).toBe(403);
    const foreign = await t.call('POST', '/v1/platforms', {
      token: null,
      headers: { cookie, origin: 'https://evil.example' },
      body,
    });
    expect(foreign.status).toBe(403);
    expect((await t.call('GET', '/v1/platforms/COOKIE_MADE')).status).toBe(404);
    // The platform's own return origin is allowlisted automatically (spec 2.15).
    const made = await t.call('POST', '/v1/platforms', {
      token: null,
      headers: { cookie, origin: 'http://localhost:3000' },
      body,
    });
    expect(made.status).toBe(201);
    const audit = await t.call('GET', '/v1/audit-records?targetKey=COOKIE_MADE');
    expect(JSON.stringify(audit.body)).toContain('user-1@example.test');

    // Another user's cookie carries no permission.
    const user = await steps.signIn(t.provider, 'CONSOLE', '/', 'user-2');
    const userCookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(user.landed.headers).token)}`;
    const refused = await t.call('GET', '/v1/platforms', {
      token: null,
      headers: { cookie: userCookie },
    });
    expect(refused.status).toBe(403);
  });
});
