import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis, type RedisClient } from '@gateway/db';
import { createTestRedis, type TestRedis } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// The signed-in user's own gateway sessions (GET/DELETE /v1/account/sessions) and the admin's
// view of a user's (GET/DELETE /v1/admin/users/{userId}/sessions) over real HTTP: sign-ins
// through a real OpenID Provider, the platform's view through introspection (spec 4.5), on
// both auth-flow stores (SQL on PostgreSQL, and Redis).

const ALLOWED_ORIGIN = 'http://localhost:3000';
const accountIds = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon'];
const accounts = accountIds.map((accountId) => ({
  accountId,
  email: `${accountId}@example.test`,
  emailVerified: true,
}));

type SessionBody = {
  id: string;
  platform: { key: string; name: string } | null;
  environment: { key: string; tier: string };
  createdAt: string;
  expiresAt: string;
  current?: boolean;
};

const stores = [
  { name: 'SQL', redis: false },
  { name: 'Redis', redis: true },
] as const;

describe.each(stores)('gateway sessions on the $name store', ({ redis: withRedis }) => {
  let t: GatewayUnderTest;
  let testRedis: TestRedis | undefined;
  let redis: RedisClient | undefined;
  let shopKey: IssuedKey;

  beforeAll(async () => {
    if (withRedis) {
      testRedis = await createTestRedis();
      redis = await connectRedis({
        url: testRedis.url,
        keyPrefix: testRedis.keyPrefix,
        timeoutMs: 5_000,
      });
    }
    t = await startGatewayUnderTest({}, { accounts }, redis === undefined ? {} : { redis });
    const platform = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey: 'SHOP',
        displayName: 'The Shop',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: `${ALLOWED_ORIGIN}/`,
            callbackUrl: `${ALLOWED_ORIGIN}/auth/callback`,
            isDefault: true,
          },
        ],
      },
    });
    expect(platform.status).toBe(201);
    shopKey = (platform.body.credentials as IssuedKey[])[0] as IssuedKey;
  });

  afterAll(async () => {
    await t?.close();
    redis?.disconnect();
    await testRedis?.cleanup();
  });

  /** A fresh browser sign-in of the account at SHOP: its session token and id. */
  async function signIn(accountId: string): Promise<{ token: string; id: string }> {
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/', accountId);
    expect(landed.status).toBe(302);
    const { token } = sessionCookieOf(landed.headers);
    const introspected = await introspect(token);
    expect(introspected.active).toBe(true);
    return { token, id: String(introspected.sessionId) };
  }

  async function introspect(token: string): Promise<Record<string, unknown>> {
    const answer = await loginSteps(t).introspect(shopKey, token);
    expect(answer.status).toBe(200);
    return answer.body;
  }

  const active = async (token: string) => (await introspect(token)).active === true;

  const cookie = (token: string) => `svc_auth_session=${encodeURIComponent(token)}`;

  /** A cookie-authenticated call, with the allowlisted Origin unless told otherwise. */
  function withCookie(method: string, path: string, token: string, origin = ALLOWED_ORIGIN) {
    return t.call(method, path, {
      token: null,
      headers: { cookie: cookie(token), ...(origin === '' ? {} : { origin }) },
    });
  }

  async function userToken(accountId: string): Promise<string> {
    return (await t.provider.userTokens({ accountId })).accessToken;
  }

  async function userIdOf(accountId: string): Promise<string> {
    const row = (await t.db
      .knex('authflow.users')
      .where({ issuer: t.provider.issuer, subject: accountId })
      .first('id')) as { id: string };
    return row.id;
  }

  const listed = (answer: { body: { items?: unknown } }) => answer.body.items as SessionBody[];

  describe('GET /v1/account/sessions (listMySessions)', () => {
    it("lists the caller's live sessions only, newest first, the cookie's own marked current", async () => {
      const first = await signIn('ann');
      const second = await signIn('ann');
      const ended = await signIn('ann');
      const someoneElse = await signIn('ben');
      expect((await withCookie('POST', '/v1/auth/logout', ended.token)).status).toBe(200);

      const answer = await withCookie('GET', '/v1/account/sessions', second.token);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      const items = listed(answer);
      expect(items.map((item) => item.id)).toEqual([second.id, first.id]);
      expect(items.map((item) => item.current)).toEqual([true, false]);
      for (const item of items) {
        // Exactly these fields: never a token or its hash.
        expect(item).toEqual({
          id: expect.any(String),
          platform: { key: 'SHOP', name: 'The Shop' },
          environment: { key: 'PROD', tier: 'development' },
          createdAt: expect.any(String),
          expiresAt: expect.any(String),
          current: expect.any(Boolean),
        });
        expect(Date.parse(item.expiresAt)).toBeGreaterThan(Date.parse(item.createdAt));
      }
      expect(JSON.stringify(answer.body)).not.toContain(second.token);
      expect(items.map((item) => item.id)).not.toContain(someoneElse.id);
    });

    it('with a user bearer token: the same sessions, none current', async () => {
      const session = await signIn('cat');
      const answer = await t.call('GET', '/v1/account/sessions', { token: await userToken('cat') });
      expect(answer.status).toBe(200);
      expect(listed(answer).map((item) => [item.id, item.current])).toEqual([[session.id, false]]);
    });

    it('answers 401 without credentials and 403 for a machine token', async () => {
      const none = await t.call('GET', '/v1/account/sessions', { token: null });
      expect(none.status).toBe(401);
      expect(none.body.code).toBe('UNAUTHORIZED');
      const machine = await t.call('GET', '/v1/account/sessions');
      expect(machine.status).toBe(403);
      expect(machine.body.code).toBe('FORBIDDEN');
    });
  });

  describe('DELETE /v1/account/sessions/{sessionId} (revokeMySession)', () => {
    it('ends another session of the caller: its platform sees it inactive, the caller stays signed in', async () => {
      const other = await signIn('dan');
      const mine = await signIn('dan');
      const answer = await withCookie('DELETE', `/v1/account/sessions/${other.id}`, mine.token);
      expect(answer.status).toBe(204);
      expect(answer.headers.getSetCookie()).toEqual([]);
      expect(await active(other.token)).toBe(false);
      expect(await active(mine.token)).toBe(true);

      const again = await withCookie('DELETE', `/v1/account/sessions/${other.id}`, mine.token);
      expect(again.status).toBe(404);
      expect(again.body.code).toBe('NOT_FOUND');
    });

    it("answers 404 for another user's session, which stays active", async () => {
      const theirs = await signIn('eve');
      const mine = await signIn('fay');
      const answer = await withCookie('DELETE', `/v1/account/sessions/${theirs.id}`, mine.token);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: 'NOT_FOUND' });
      expect(await active(theirs.token)).toBe(true);
      const byToken = await t.call('DELETE', `/v1/account/sessions/${theirs.id}`, {
        token: await userToken('fay'),
      });
      expect(byToken.status).toBe(404);
      expect(await active(theirs.token)).toBe(true);
    });

    it("ending the cookie's own session clears the cookie", async () => {
      const mine = await signIn('gus');
      const answer = await withCookie('DELETE', `/v1/account/sessions/${mine.id}`, mine.token);
      expect(answer.status).toBe(204);
      expect(answer.headers.getSetCookie().join(';')).toMatch(/^svc_auth_session=;.*Max-Age=0/i);
      expect(await active(mine.token)).toBe(false);
      const after = await withCookie('GET', '/v1/account/sessions', mine.token);
      expect(after.status).toBe(401);
    });

    it('refuses a cookie write without an allowlisted Origin (403) and ends nothing', async () => {
      const other = await signIn('hal');
      const mine = await signIn('hal');
      for (const origin of ['', 'https://evil.example']) {
        const one = await withCookie(
          'DELETE',
          `/v1/account/sessions/${other.id}`,
          mine.token,
          origin,
        );
        expect(one.status).toBe(403);
        expect(one.body.code).toBe('FORBIDDEN');
        const all = await withCookie(
          'DELETE',
          '/v1/account/sessions?except=current',
          mine.token,
          origin,
        );
        expect(all.status).toBe(403);
        expect(all.body.code).toBe('FORBIDDEN');
      }
      expect(await active(other.token)).toBe(true);
    });

    it('answers 400 VALIDATION_ERROR for a malformed session id', async () => {
      const mine = await signIn('hal');
      const answer = await withCookie('DELETE', '/v1/account/sessions/not-a-uuid', mine.token);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_ERROR');
    });
  });

  describe('DELETE /v1/account/sessions?except=current (revokeMyOtherSessions)', () => {
    it('ends every other session of the caller and keeps the cookie session signed in', async () => {
      const others = [await signIn('ivy'), await signIn('ivy')];
      const mine = await signIn('ivy');
      const someoneElse = await signIn('jon');

      const answer = await withCookie('DELETE', '/v1/account/sessions?except=current', mine.token);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ revokedSessions: 2 });
      expect(answer.headers.getSetCookie()).toEqual([]);
      for (const other of others) expect(await active(other.token)).toBe(false);
      expect(await active(mine.token)).toBe(true);
      expect(await active(someoneElse.token)).toBe(true);
      const left = await withCookie('GET', '/v1/account/sessions', mine.token);
      expect(listed(left).map((item) => [item.id, item.current])).toEqual([[mine.id, true]]);
    });

    it('with a user bearer token ends all of the caller’s sessions', async () => {
      const sessions = [await signIn('jon'), await signIn('jon')];
      const token = await userToken('jon');
      const before = listed(await t.call('GET', '/v1/account/sessions', { token }));
      expect(before.map((item) => item.id)).toEqual(
        expect.arrayContaining(sessions.map((session) => session.id)),
      );
      const answer = await t.call('DELETE', '/v1/account/sessions?except=current', { token });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ revokedSessions: before.length });
      for (const session of sessions) expect(await active(session.token)).toBe(false);
      expect(listed(await t.call('GET', '/v1/account/sessions', { token }))).toEqual([]);
    });

    it('answers 400 VALIDATION_ERROR unless except is current', async () => {
      const mine = await signIn('ivy');
      for (const query of ['', '?except=all', '?except=current&other=1']) {
        const answer = await withCookie('DELETE', `/v1/account/sessions${query}`, mine.token);
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('VALIDATION_ERROR');
      }
      expect(await active(mine.token)).toBe(true);
    });
  });

  describe('the admin view: /v1/admin/users/{userId}/sessions', () => {
    it("lists a user's live sessions without `current`; 404 for an unknown user, 403 without platforms:admin", async () => {
      const first = await signIn('ann');
      const userId = await userIdOf('ann');
      const answer = await t.call('GET', `/v1/admin/users/${userId}/sessions`);
      expect(answer.status).toBe(200);
      const items = listed(answer);
      expect(items[0]).toEqual({
        id: first.id,
        platform: { key: 'SHOP', name: 'The Shop' },
        environment: { key: 'PROD', tier: 'development' },
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
      });
      const own = await withCookie('GET', '/v1/account/sessions', first.token);
      expect(items.map((item) => item.id)).toEqual(listed(own).map((item) => item.id));

      const unknown = await t.call(
        'GET',
        '/v1/admin/users/00000000-0000-4000-8000-000000000000/sessions',
      );
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('NOT_FOUND');
      const notAdmin = await t.call('GET', `/v1/admin/users/${userId}/sessions`, {
        token: await userToken('ann'),
      });
      expect(notAdmin.status).toBe(403);
    });

    it('ends one session of the user, audited as user_session.revoked; its platform sees it inactive', async () => {
      const ended = await signIn('ben');
      const kept = await signIn('ben');
      const userId = await userIdOf('ben');
      const path = `/v1/admin/users/${userId}/sessions/${ended.id}`;
      const answer = await t.call('DELETE', path);
      expect(answer.status).toBe(204);
      expect(await active(ended.token)).toBe(false);
      expect(await active(kept.token)).toBe(true);

      const audit = await t.call('GET', '/v1/audit-records?kind=user_session.revoked&pageSize=100');
      const records = (audit.body.items ?? []).filter((record) => record.targetId === userId);
      expect(records).toEqual([
        expect.objectContaining({
          kind: 'user_session.revoked',
          targetType: 'user',
          targetKey: 'ben@example.test',
          actor: expect.objectContaining({ kind: 'machine' }),
          details: { sessionId: ended.id, environmentKey: 'PROD', platformKey: 'SHOP' },
        }),
      ]);

      const again = await t.call('DELETE', path);
      expect(again.status).toBe(404);
      expect(again.body.code).toBe('NOT_FOUND');
    });

    it("answers 404 for another user's session id, which stays active", async () => {
      const theirs = await signIn('cat');
      const userId = await userIdOf('dan');
      const answer = await t.call('DELETE', `/v1/admin/users/${userId}/sessions/${theirs.id}`);
      expect(answer.status).toBe(404);
      expect(await active(theirs.token)).toBe(true);
    });
  });
});
