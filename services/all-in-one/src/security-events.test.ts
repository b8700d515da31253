import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/telemetry';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// Security events in the audit log (docs/operations.md, Security events), over real HTTP:
// the whole gateway on PostgreSQL with a real OpenID Provider, records read back through
// GET /v1/audit-records as an admin would.

type AuditRecord = {
  kind: string;
  actor: { kind: string; subject: string | null; clientId: string | null };
  targetType: string;
  targetKey: string;
  details: Record<string, unknown>;
};

const FLUSH_LINE = 'platform authentication failures recorded';
/** The return URL of the admin console platform; its origin is allowlisted for cookie writes. */
const CONSOLE_HOME = 'http://localhost:3000/console/';
const CONSOLE_ORIGIN = 'http://localhost:3000';
/** Called at the next write of aggregated platform authentication failures. */
let onFlush: () => void = () => undefined;
const nextFlush = () => new Promise<void>((resolve) => (onFlush = resolve));
/** The request log lines the gateway wrote. */
const requestLines: { path?: string; status?: number }[] = [];
let t: GatewayUnderTest;
let shopKey: IssuedKey;

async function auditRecords(kind: string): Promise<AuditRecord[]> {
  const answer = await t.call('GET', `/v1/audit-records?kind=${kind}&pageSize=100`);
  expect(answer.status).toBe(200);
  return answer.body.items as unknown as AuditRecord[];
}

beforeAll(async () => {
  const logger = createLogger({
    service: 'gateway',
    level: 'info',
    destination: {
      write: (line: string) => {
        if (line.includes(FLUSH_LINE)) onFlush();
        if (line.includes('"requestId"')) requestLines.push(JSON.parse(line) as never);
      },
    },
  });
  t = await startGatewayUnderTest(
    {
      PLATFORM_AUTH_FAILURE_WINDOW_SECONDS: '3',
      PLATFORM_ADMIN_BOOTSTRAP_EMAILS: 'admin-1@example.test',
    },
    {
      accounts: [
        { accountId: 'user-1', email: 'user-1@example.test', emailVerified: true },
        { accountId: 'admin-1', email: 'admin-1@example.test', emailVerified: true },
      ],
    },
    { logger },
  );
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
});

describe('sign-in, logout and revocation records', () => {
  it('records a sign-in with its user, session, platform and environment, and no token', async () => {
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    expect(landed.status).toBe(302);
    const { token } = sessionCookieOf(landed.headers);

    const [record] = await auditRecords('auth.sign_in_succeeded');
    expect(record).toMatchObject({
      targetType: 'platform',
      targetKey: 'SHOP',
      actor: { kind: 'user' },
      details: { environmentKey: 'PROD', next: 'handoff' },
    });
    expect(record?.details.userId).toEqual(record?.actor.subject);
    expect(record?.details.sessionId).toEqual(expect.any(String));
    expect(JSON.stringify(record)).not.toContain(token);
  });

  it('records a refused callback with its error code', async () => {
    const steps = loginSteps(t);
    const start = await steps.browserGet(
      `/v1/auth/start?platformKey=SHOP&returnTo=${encodeURIComponent('/')}`,
    );
    const state = new URL(start.location ?? '').searchParams.get('state') ?? '';
    // A code the provider never issued: the exchange at its token endpoint fails.
    const landed = await steps.browserGet(
      `/v1/auth/callback?code=made-up-code&state=${encodeURIComponent(state)}`,
    );
    expect(landed.status).toBeGreaterThanOrEqual(400);
    const refusal = JSON.parse(landed.text) as { code: string };

    const records = await auditRecords('auth.sign_in_refused');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      targetKey: 'SHOP',
      details: { errorCode: refusal.code, environmentKey: 'PROD' },
    });
    expect(JSON.stringify(records)).not.toContain('made-up-code');
  });

  it('records no refusal for a state that names no login', async () => {
    const landed = await loginSteps(t).browserGet('/v1/auth/callback?code=x&state=unknown-state');
    expect(landed.status).toBe(404);
    expect(await auditRecords('auth.sign_in_refused')).toHaveLength(1);
  });

  it('records a sign-in the identity provider refused, and the state cannot be used again', async () => {
    const steps = loginSteps(t);
    const start = await steps.browserGet(
      `/v1/auth/start?platformKey=SHOP&returnTo=${encodeURIComponent('/')}`,
    );
    // prompt=none without a session at the provider: it sends the browser back to the
    // gateway with an OAuth error (login_required) and the login's state instead of a code.
    const authorize = new URL(start.location ?? '');
    authorize.searchParams.set('prompt', 'none');
    const sentBack = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(sentBack.headers.get('location') ?? '', authorize);
    expect(callback.searchParams.get('error')).toBe('login_required');
    const state = callback.searchParams.get('state') ?? '';

    const landed = await steps.browserGet(`/v1/auth/callback${callback.search}`);
    expect(landed.status).toBe(400);
    const refusal = JSON.parse(landed.text) as { code: string; details: unknown };
    expect(refusal).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { identityError: 'login_required' },
    });

    const records = await auditRecords('auth.sign_in_refused');
    const refused = records.filter((record) => record.details.errorCode === refusal.code);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: { kind: 'system' },
      targetType: 'platform',
      targetKey: 'SHOP',
      details: { errorCode: 'VALIDATION_ERROR', environmentKey: 'PROD' },
    });
    expect(JSON.stringify(refused)).not.toContain(state);

    // The login is over: its state is unknown now, with a code as with another error.
    const replayed = await steps.browserGet(
      `/v1/auth/callback?code=x&state=${encodeURIComponent(state)}`,
    );
    expect(replayed.status).toBe(404);
    const again = await steps.browserGet(`/v1/auth/callback${callback.search}`);
    expect(again.status).toBe(400);
    expect(await auditRecords('auth.sign_in_refused')).toHaveLength(records.length);
  });

  it('records a logout with its session and user', async () => {
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    const { token } = sessionCookieOf(landed.headers);
    const [signIn] = await auditRecords('auth.sign_in_succeeded');

    const answer = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: {
        cookie: `svc_auth_session=${encodeURIComponent(token)}`,
        origin: 'http://localhost:3000',
      },
    });
    expect(answer.status).toBe(200);

    const [record] = await auditRecords('auth.logout');
    expect(record).toMatchObject({
      targetKey: 'SHOP',
      details: { sessionId: signIn?.details.sessionId, userId: signIn?.details.userId },
    });
  });

  it('records an admin revocation naming the admin, the user and the count', async () => {
    await loginSteps(t).signIn(t.provider, 'SHOP', '/');
    const [signIn] = await auditRecords('auth.sign_in_succeeded');
    const userId = String(signIn?.details.userId);

    // No identity service API is configured here: the gateway sessions go, the answer is 503.
    const answer = await t.call('POST', `/v1/admin/users/${userId}/sessions/revoke`);
    // The sessions of the first sign-in and of this one.
    expect(answer.body.details).toMatchObject({ revokedGatewaySessions: 2 });

    const [record] = await auditRecords('session.revoked');
    expect(record).toMatchObject({
      actor: { kind: 'machine' },
      targetType: 'user',
      targetId: userId,
      details: { revokedGatewaySessions: 2, identitySessions: answer.body.code },
    });
    expect(record?.actor.clientId).not.toBe('');
    expect(record?.actor.clientId).not.toBeNull();
  });
});

describe('admin cookie records', () => {
  const cookieOf = (headers: Headers) =>
    `svc_auth_session=${encodeURIComponent(sessionCookieOf(headers).token)}`;
  // A write, so the cookie needs the allowlisted Origin (spec 5).
  const renameConsole = (cookie: string) =>
    t.call('PATCH', '/v1/platforms/CONSOLE', {
      token: null,
      headers: { cookie, origin: CONSOLE_ORIGIN },
      body: { displayName: 'Admin console' },
    });

  beforeAll(async () => {
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey: 'CONSOLE',
        displayName: 'Console',
        adminConsole: true,
        redirectPairs: [
          {
            label: 'web',
            returnUrl: CONSOLE_HOME,
            callbackUrl: `${CONSOLE_HOME}callback`,
            isDefault: true,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
  });

  it("records an admin console's cookie used as an admin credential, with its user and platform", async () => {
    // admin-1 is a platform_admin from its first deployment login (the bootstrap list).
    const { landed } = await loginSteps(t).signIn(t.provider, 'CONSOLE', CONSOLE_HOME, 'admin-1');
    const cookie = cookieOf(landed.headers);
    const [signIn] = await auditRecords('auth.sign_in_succeeded');
    expect(signIn?.targetKey).toBe('CONSOLE');

    expect((await renameConsole(cookie)).status).toBe(200);

    const records = await auditRecords('admin.cookie_used');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      actor: { kind: 'user', subject: signIn?.details.userId },
      targetType: 'platform',
      targetKey: 'CONSOLE',
      details: {
        userId: signIn?.details.userId,
        sessionId: signIn?.details.sessionId,
        environmentKey: 'PROD',
        permissions: expect.arrayContaining(['platforms:admin']),
      },
    });
    expect(JSON.stringify(records)).not.toContain(sessionCookieOf(landed.headers).token);

    // The same session again within the hour: no second row.
    const read = await t.call('GET', '/v1/platforms', { token: null, headers: { cookie } });
    expect(read.status).toBe(200);
    expect(await auditRecords('admin.cookie_used')).toHaveLength(1);
  });

  it('records the cookie of the same admin signed in through a platform that is no admin console (spec 5)', async () => {
    const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/', 'admin-1');

    const answer = await renameConsole(cookieOf(landed.headers));
    expect(answer.status).toBe(200);

    const records = await auditRecords('admin.cookie_used');
    expect(records.map((record) => record.targetKey).sort()).toEqual(['CONSOLE', 'SHOP']);
  });
});

describe('refused platform credentials', () => {
  it('answers 401 to a wrong secret, an unknown id, no credentials, a Bearer and bad base64; then the right key redeems the code (spec 4.4)', async () => {
    const steps = loginSteps(t);
    const { landed } = await steps.signIn(t.provider, 'SHOP', '/', 'user-1');
    const code = new URL(landed.location ?? '').searchParams.get('code') ?? '';
    const exchangeWith = (authorization: string | undefined) =>
      t.call('POST', '/v1/auth/exchange', {
        token: null,
        headers: authorization === undefined ? {} : { authorization },
        body: { code },
      });
    const basic = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    for (const authorization of [
      basic(shopKey.clientId, 'gws_wrong'),
      basic('gwc_unknown', shopKey.clientSecret),
      undefined,
      'Bearer abc',
      'Basic !!not-base64!!',
    ]) {
      const refused = await exchangeWith(authorization);
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('UNAUTHORIZED');
    }
    const flushed = nextFlush();
    const redeemed = await exchangeWith(basic(shopKey.clientId, shopKey.clientSecret));
    expect(redeemed.status).toBe(200);
    // The refusals' window is written before the next case counts its own.
    await flushed;
  });

  it('writes one aggregated record per client id and window, with the count', async () => {
    const wrong = { ...shopKey, clientSecret: 'gws_not-the-secret' };
    const since = new Date().toISOString();
    const flushed = nextFlush();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => loginSteps(t).introspect(wrong, 'any-token')),
    );
    // Past ten failures the address is in its back-off (429); those attempts count too.
    expect(answers.every((answer) => answer.status === 401 || answer.status === 429)).toBe(true);
    // The right key from the same address is answered at once, whatever the guesses.
    const right = await loginSteps(t).introspect(shopKey, 'any-token');
    expect(right.status).toBe(200);
    // Refusals are counted, not logged one line each; the answered request has its line.
    const introspections = requestLines.filter((line) => line.path === '/v1/auth/introspect');
    expect(introspections.filter((line) => line.status !== 200)).toEqual([]);

    await flushed;

    const records = (await auditRecords('platform.authentication_failed')).filter(
      (record) => String(record.details.windowStart) >= since,
    );
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      targetType: 'platform_client',
      targetKey: shopKey.clientId,
      details: { count: 50 },
    });
    expect(JSON.stringify(records)).not.toContain('gws_not-the-secret');
  });
});
