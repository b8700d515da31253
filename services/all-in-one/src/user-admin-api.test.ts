import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startTestOpenIdProvider,
  unusedLocalPort,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import {
  startInternalIdentityService,
  type InternalIdentityService,
} from './testing/internal-identity-service.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// Spec 4.12, 3.3 and 4.15 over real HTTP: the user admin API against PostgreSQL, real OpenID
// Providers for sign-in and user tokens, and a real development identity service for the
// internal users API.

const prodAccounts = ['user-1', 'alice', 'bob', 'carol', 'under_score'].map((accountId) => ({
  accountId,
  email: `${accountId === 'alice' ? 'Alice.Smith' : accountId}@example.test`,
  emailVerified: true,
}));

let t: GatewayUnderTest;
let partner: TestOpenIdProvider;
let internal: InternalIdentityService;
let shopKey: IssuedKey;
const userIds: Record<string, string> = {};

type AdminUserBody = Record<string, unknown> & { id: string; roles: string[] };

async function userToken(provider: TestOpenIdProvider, accountId: string): Promise<string> {
  return (await provider.userTokens({ accountId })).accessToken;
}

/** A user token provisions its user (spec 5 rule 5), whatever the route answers. */
async function provision(provider: TestOpenIdProvider, accountId: string): Promise<number> {
  return (await t.call('GET', '/v1/admin/users', { token: await userToken(provider, accountId) }))
    .status;
}

async function listAll(query = ''): Promise<AdminUserBody[]> {
  const answer = await t.call('GET', `/v1/admin/users?pageSize=100${query}`);
  expect(answer.status).toBe(200);
  return answer.body.items as AdminUserBody[];
}

beforeAll(async () => {
  internal = await startInternalIdentityService();
  t = await startGatewayUnderTest(internal.env, { accounts: prodAccounts });
  partner = await startTestOpenIdProvider({
    environmentKey: 'PARTNER',
    accounts: [{ accountId: 'pat', email: 'pat@partner.test', emailVerified: true }],
  });
  const gatewayClient = partner.clients.find((client) => client.clientId === 'test-gateway');
  const environment = await t.call('POST', '/v1/identity-environments', {
    body: {
      environmentKey: 'PARTNER',
      displayName: 'Partner',
      tier: 'development',
      issuer: partner.issuer,
      oidcClientId: 'test-gateway',
      oidcClientSecret: gatewayClient?.clientSecret,
    },
  });
  expect(environment.status).toBe(201);
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
  shopKey = (platform.body.credentials as IssuedKey[])[0] as IssuedKey;

  // Users in a known login order: carol, bob, alice (most recent last), then pat (PARTNER).
  for (const accountId of ['under_score', 'carol', 'bob', 'alice']) {
    expect(await provision(t.provider, accountId)).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(await provision(partner, 'pat')).toBe(403);
  for (const user of await listAll()) {
    userIds[String(user.subject)] = user.id;
  }
});

afterAll(async () => {
  await t.close();
  await partner.close();
  await internal.close();
});

describe('access (spec 5)', () => {
  it('answers 401 without credentials and 403 without platforms:admin', async () => {
    const anonymous = await t.call('GET', '/v1/admin/users', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('UNAUTHORIZED');
    const userId = userIds.bob ?? '';
    for (const [method, path] of [
      ['GET', '/v1/admin/users'],
      ['PUT', `/v1/admin/users/${userId}/roles/platform_admin`],
      ['DELETE', `/v1/admin/users/${userId}/roles/platform_admin`],
      ['POST', `/v1/admin/users/${userId}/sessions/revoke`],
    ] as const) {
      expect((await t.call(method, path, { token: null })).status).toBe(401);
      const refused = await t.call(method, path, { token: await userToken(t.provider, 'bob') });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('FORBIDDEN');
    }
    const noScope = await t.provider.machineToken({ scope: 'onboarding:schema:read' });
    expect((await t.call('GET', '/v1/admin/users', { token: noScope })).status).toBe(403);
  });
});

describe('GET /v1/admin/users (listUsers)', () => {
  it('lists AdminUsers by last login, most recent first', async () => {
    const answer = await t.call('GET', '/v1/admin/users');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toMatchObject({ total: 5, page: 1, pageSize: 25 });
    const items = answer.body.items as AdminUserBody[];
    // Bob's token was used last (the access test): each verified user token is a login.
    expect(items.map((user) => user.subject)).toEqual([
      'bob',
      'pat',
      'alice',
      'carol',
      'under_score',
    ]);
    expect(items[2]).toEqual({
      id: userIds.alice,
      issuer: t.provider.issuer,
      subject: 'alice',
      environmentKey: 'PROD',
      deploymentEnvironment: true,
      email: 'Alice.Smith@example.test',
      emailVerified: true,
      status: 'ACTIVE',
      roles: [],
      lastLoginAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(items[1]).toMatchObject({
      environmentKey: 'PARTNER',
      deploymentEnvironment: false,
      issuer: partner.issuer,
    });
  });

  it('filters by a case-insensitive e-mail substring, LIKE wildcards taken literally', async () => {
    expect((await listAll('&search=aLiCe.s')).map((user) => user.subject)).toEqual(['alice']);
    expect((await listAll('&search=_')).map((user) => user.subject)).toEqual(['under_score']);
    expect(await listAll('&search=%25')).toEqual([]);
    expect((await listAll('&search=example.test')).length).toBe(4);
  });

  it('filters by environment and pages', async () => {
    expect((await listAll('&environmentKey=PARTNER')).map((user) => user.subject)).toEqual(['pat']);
    const page = await t.call('GET', '/v1/admin/users?environmentKey=PROD&page=2&pageSize=2');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 4, page: 2, pageSize: 2 });
    expect((page.body.items as AdminUserBody[]).map((user) => user.subject)).toEqual([
      'carol',
      'under_score',
    ]);
    const beyond = await t.call('GET', '/v1/admin/users?page=9');
    expect(beyond.body).toMatchObject({ items: [], total: 5, page: 9 });
  });

  it('validates the query', async () => {
    for (const query of ['pageSize=101', 'page=0', 'pageSize=abc', 'unknown=1']) {
      const answer = await t.call('GET', `/v1/admin/users?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('the platform_admin role (spec 4.12, 3.3)', () => {
  const rolePath = (userId: string | undefined) =>
    `/v1/admin/users/${userId ?? ''}/roles/platform_admin`;

  it('grants it to a deployment user, idempotently, and records it', async () => {
    for (let i = 0; i < 2; i += 1) {
      const answer = await t.call('PUT', rolePath(userIds.alice));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: userIds.alice,
        roles: ['platform_admin'],
        deploymentEnvironment: true,
      });
    }
    // The role counts for her user token at once (permissions are read per request).
    const aliceToken = await userToken(t.provider, 'alice');
    expect((await t.call('GET', '/v1/admin/users', { token: aliceToken })).status).toBe(200);
    const listed = await listAll('&search=alice');
    expect(listed[0]?.roles).toEqual(['platform_admin']);
    const audit = await t.call('GET', '/v1/audit-records?kind=user_role.granted');
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items?.[0]).toMatchObject({
      kind: 'user_role.granted',
      targetType: 'user',
      targetId: userIds.alice,
      details: { role: 'platform_admin', environmentKey: 'PROD' },
    });
  });

  it('refuses a non-deployment user (409) and an unknown one (404)', async () => {
    const partnerUser = await t.call('PUT', rolePath(userIds.pat));
    expect(partnerUser.status).toBe(409);
    expect(partnerUser.body.code).toBe('ROLE_REQUIRES_DEPLOYMENT_ENVIRONMENT');
    const unknown = await t.call('PUT', rolePath('00000000-0000-4000-8000-000000000000'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    expect((await t.call('DELETE', rolePath('00000000-0000-4000-8000-000000000000'))).status).toBe(
      404,
    );
    expect((await t.call('PUT', rolePath('not-a-uuid'))).status).toBe(400);
  });

  it('never removes the last admin', async () => {
    const last = await t.call('DELETE', rolePath(userIds.alice));
    expect(last.status).toBe(409);
    expect(last.body.code).toBe('LAST_PLATFORM_ADMIN');
    // A user without the role: a no-op answering the user.
    const none = await t.call('DELETE', rolePath(userIds.bob));
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ id: userIds.bob, roles: [] });
  });

  it('of two concurrent revokes of the last two admins, exactly one wins', async () => {
    expect((await t.call('PUT', rolePath(userIds.bob))).status).toBe(200);
    const answers = await Promise.all([
      t.call('DELETE', rolePath(userIds.alice)),
      t.call('DELETE', rolePath(userIds.bob)),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const admins = (await listAll('&environmentKey=PROD')).filter((user) => user.roles.length > 0);
    expect(admins).toHaveLength(1);
    // Put both back for the next test.
    expect((await t.call('PUT', rolePath(userIds.alice))).status).toBe(200);
    expect((await t.call('PUT', rolePath(userIds.bob))).status).toBe(200);
  });

  it('revokes with another admin left, and strips the live sessions at once', async () => {
    // user-1 becomes an admin, then signs in: the session's snapshot holds the permissions.
    const user1 = await provision(t.provider, 'user-1');
    expect(user1).toBe(403);
    userIds['user-1'] = (await listAll('&search=user-1'))[0]?.id ?? '';
    expect((await t.call('PUT', rolePath(userIds['user-1']))).status).toBe(200);
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    expect(landed.status).toBe(302);
    const sessionPermissions = async () =>
      (
        (await t.db
          .knex('authflow.sessions')
          .where({ user_id: userIds['user-1'] })
          .whereNull('revoked_at')
          .select('permissions')) as { permissions: string[] }[]
      ).map((row) => row.permissions);
    expect(await sessionPermissions()).toEqual([
      ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'],
    ]);
    const token = await userToken(t.provider, 'user-1');
    expect((await t.call('GET', '/v1/admin/users', { token })).status).toBe(200);

    const revoked = await t.call('DELETE', rolePath(userIds['user-1']));
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: userIds['user-1'], roles: [] });
    expect(await sessionPermissions()).toEqual([[]]);
    const refused = await t.call('GET', '/v1/admin/users', { token });
    expect(refused.status).toBe(403);
    // Idempotent.
    expect((await t.call('DELETE', rolePath(userIds['user-1']))).status).toBe(200);
    const audit = await t.call('GET', '/v1/audit-records?kind=user_role.revoked');
    expect(
      (audit.body.items ?? []).filter((record) => record.targetId === userIds['user-1']),
    ).toHaveLength(1);
  });
});

describe('POST /v1/admin/users/{userId}/sessions/revoke (revokeUserSessions)', () => {
  const revokePath = (userId: string | undefined) =>
    `/v1/admin/users/${userId ?? ''}/sessions/revoke`;

  it('revokes the gateway sessions, then the identity sessions (spec 4.15)', async () => {
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    const { token } = sessionCookieOf(landed.headers);
    const before = await loginSteps(t).introspect(shopKey, token);
    expect(before.body.active).toBe(true);

    const answer = await t.call('POST', revokePath(userIds['user-1']));
    expect(answer.status).toBe(200);
    expect(answer.body.revokedGatewaySessions).toBeGreaterThanOrEqual(2);
    expect(answer.body.identitySessionsRevoked).toBe(true);
    expect((await loginSteps(t).introspect(shopKey, token)).body.active).toBe(false);

    // Again: nothing left at the gateway; the identity service still knows the user.
    const again = await t.call('POST', revokePath(userIds['user-1']));
    expect(again.body).toEqual({ revokedGatewaySessions: 0, identitySessionsRevoked: true });
  });

  it('answers identitySessionsRevoked false when the identity service has no such user', async () => {
    const answer = await t.call('POST', revokePath(userIds.carol));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ revokedGatewaySessions: 0, identitySessionsRevoked: false });
  });

  it('answers 404 for an unknown user', async () => {
    const answer = await t.call('POST', revokePath('00000000-0000-4000-8000-000000000000'));
    expect(answer.status).toBe(404);
  });

  it('answers 503 IDENTITY_UNAVAILABLE with the gateway count when the service is down', async () => {
    const down = await t.startAnother({
      IDENTITY_SERVICE_URL: `http://127.0.0.1:${await unusedLocalPort()}`,
    });
    try {
      const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
      const { token } = sessionCookieOf(landed.headers);
      const answer = await down.call('POST', revokePath(userIds['user-1']));
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({
        code: 'IDENTITY_UNAVAILABLE',
        details: { revokedGatewaySessions: 1 },
      });
      // The gateway sessions were revoked first.
      expect((await loginSteps(t).introspect(shopKey, token)).body.active).toBe(false);
    } finally {
      await down.close();
    }
  });

  it('answers 503 IDENTITY_SERVICE_NOT_CONFIGURED without IDENTITY_SERVICE_URL', async () => {
    const unconfigured = await t.startAnother({ IDENTITY_SERVICE_URL: '' });
    try {
      const answer = await unconfigured.call('POST', revokePath(userIds.bob));
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({
        code: 'IDENTITY_SERVICE_NOT_CONFIGURED',
        details: { revokedGatewaySessions: 0 },
      });
    } finally {
      await unconfigured.close();
    }
  });
});
