import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testkit';
import {
  startGatewayUnderTest,
  type ApiResponse,
  type GatewayUnderTest,
} from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
  type LoginSteps,
} from './testing/login-steps.js';

// What a platform's sessions may do: a deployment admin's session carries its permission
// snapshot through any platform (spec 2.6, 4.4, 5), or only through an admin console with
// ADMIN_POWER_CONSOLE_ONLY (docs/decisions.md); a retired platform's sessions end; and a
// handoff code is redeemed only by the key of the callback it was sent to. Over real HTTP,
// with PostgreSQL, Redis-less login state and a real OpenID Provider.

const ADMIN_EMAIL = 'admin@example.test';
const accounts = [
  { accountId: 'admin', email: ADMIN_EMAIL, emailVerified: true },
  { accountId: 'user-1', email: 'user-1@example.test', emailVerified: true },
  { accountId: 'user-2', email: 'user-2@example.test', emailVerified: true },
];

let t: GatewayUnderTest;
let steps: LoginSteps;
const keys: Record<string, IssuedKey[]> = {};

/** The platform's own return URL origin, allowlisted for cookie writes. */
const originOf = (port: number) => `http://localhost:${port}`;
const cookieOf = (token: string) => `svc_auth_session=${encodeURIComponent(token)}`;

async function createPlatform(platformKey: string, port: number, callbacks = ['/auth/callback']) {
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey,
      displayName: platformKey,
      redirectPairs: callbacks.map((path, index) => ({
        label: `pair ${index}`,
        returnUrl: `${originOf(port)}/${index === 0 ? '' : `p${index}`}`,
        callbackUrl: `${originOf(port)}${path}`,
        isDefault: index === 0,
      })),
    },
  });
  expect(created.status).toBe(201);
  // One BFF key per pair, in the order of the pairs.
  const platform = created.body.platform as { redirectPairs: { id: string }[] };
  const issued = created.body.credentials as IssuedKey[];
  keys[platformKey] = platform.redirectPairs.map(
    (pair) => issued.find((key) => key.redirectPairId === pair.id) as IssuedKey,
  );
}

/** The BFF key of the platform's pair at `index` (0: the default pair). */
const keyOf = (platformKey: string, index = 0) => keys[platformKey]?.[index] as IssuedKey;

/** A sign-in through the platform's default pair: its handoff code and gateway cookie token. */
async function signIn(platformKey: string, accountId: string) {
  const { landed } = await steps.signIn(t.provider, platformKey, '/', accountId);
  expect(landed.status).toBe(302);
  return { code: handoffCodeOf(landed.location), cookie: sessionCookieOf(landed.headers).token };
}

/** A sign-in redeemed by the platform's first key: the exchange answer. */
async function signedInSession(platformKey: string, accountId: string): Promise<ApiResponse> {
  const { code } = await signIn(platformKey, accountId);
  const exchanged = await steps.exchange(keyOf(platformKey), code);
  expect(exchanged.status).toBe(200);
  return exchanged;
}

const gatewayTokenOf = (exchanged: ApiResponse) =>
  String((exchanged.body.session as Record<string, unknown>).gatewayToken);

const withCookie = (token: string, origin?: string) => ({
  token: null,
  headers: { cookie: cookieOf(token), ...(origin === undefined ? {} : { origin }) },
});

async function introspection(platformKey: string, token: string) {
  const answer = await steps.introspect(keyOf(platformKey), token);
  return answer.status === 200
    ? { status: answer.status, active: answer.body.active }
    : { status: answer.status };
}

/** The auth-flow hears of a registry change through the change feed. */
const untilTrue = (what: string) => ({ timeoutMs: 20_000, intervalMs: 25, what });

beforeAll(async () => {
  t = await startGatewayUnderTest({ PLATFORM_ADMIN_BOOTSTRAP_EMAILS: ADMIN_EMAIL }, { accounts });
  steps = loginSteps(t);
  await createPlatform('SHOP', 3000);
  await createPlatform('OTHER', 3100);
  await createPlatform('RETIRED', 3200);
  await createPlatform('ARCHIVED', 3300);
  await createPlatform('PAIRED', 3400, ['/a/callback', '/b/callback']);
  await createPlatform('CONFINED', 3500);
});

afterAll(async () => {
  await t.close();
});

const ADMIN_PERMISSIONS = ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'];

/** The user id of an exchange answer. */
const userIdOf = (exchanged: ApiResponse) => String((exchanged.body.user as { id: string }).id);

/** Whether the session's cookie opens the admin API (spec 5): GET /v1/platforms. */
async function listsPlatforms(call: GatewayUnderTest['call'], token: string) {
  return (await call('GET', '/v1/platforms', withCookie(token))).status;
}

describe('admin power by default (spec 2.6, 3.3, 4.4, 5)', () => {
  it("an admin's session through any deployment platform carries its snapshot and is an admin cookie", async () => {
    const { code, cookie } = await signIn('SHOP', 'admin');
    const exchanged = await steps.exchange(keyOf('SHOP'), code);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.permissions).toEqual(expect.arrayContaining(ADMIN_PERMISSIONS));
    for (const token of [cookie, gatewayTokenOf(exchanged)]) {
      expect(await listsPlatforms(t.call, token)).toBe(200);
    }
    const patch = await t.call('PATCH', '/v1/platforms/OTHER', {
      ...withCookie(cookie, originOf(3000)),
      body: { displayName: 'Renamed by an admin' },
    });
    expect(patch.status).toBe(200);
  });

  it('a grant takes effect at the next sign-in; a revocation strips the live session at once', async () => {
    const before = await signedInSession('OTHER', 'user-1');
    expect(before.body.permissions).toEqual([]);
    expect(await listsPlatforms(t.call, gatewayTokenOf(before))).toBe(403);

    const userId = userIdOf(before);
    const granted = await t.call('PUT', `/v1/admin/users/${userId}/roles/platform_admin`);
    expect(granted.status).toBe(200);
    // Spec 3.3: the session created before the grant stays without permissions.
    expect(await listsPlatforms(t.call, gatewayTokenOf(before))).toBe(403);
    const after = await signedInSession('OTHER', 'user-1');
    expect(after.body.permissions).toEqual(expect.arrayContaining(ADMIN_PERMISSIONS));
    expect(await listsPlatforms(t.call, gatewayTokenOf(after))).toBe(200);

    const revoked = await t.call('DELETE', `/v1/admin/users/${userId}/roles/platform_admin`);
    expect(revoked.status).toBe(200);
    expect(await listsPlatforms(t.call, gatewayTokenOf(after))).toBe(403);
    // Still a valid session of its user.
    expect((await t.call('GET', '/v1/account/me', withCookie(gatewayTokenOf(after)))).status).toBe(
      200,
    );
  });

  it("the admin console's session is an admin cookie too", async () => {
    const visit = await fetch(`${t.gateway.url}/admin/sign-in`, { redirect: 'manual' });
    expect(visit.status).toBe(302);
    const returnTo = new URL(visit.headers.get('location') ?? '').searchParams.get('returnTo');
    const { landed } = await steps.signIn(t.provider, 'ADMIN_CONSOLE', returnTo ?? '/', 'admin');
    expect(landed.status).toBe(302);
    expect(await listsPlatforms(t.call, sessionCookieOf(landed.headers).token)).toBe(200);
  });

  it('a user who is not an admin gains nothing', async () => {
    const user = await signedInSession('SHOP', 'user-1');
    expect(user.body.permissions).toEqual([]);
    expect(await listsPlatforms(t.call, gatewayTokenOf(user))).toBe(403);
  });

  it('setting adminConsole needs platforms:admin and rejects unknown properties', async () => {
    const { accessToken } = await t.provider.userTokens({ accountId: 'user-1' });
    const refused = await t.call('PATCH', '/v1/platforms/SHOP', {
      token: accessToken,
      body: { adminConsole: true },
    });
    expect(refused.status).toBe(403);
    const unknown = await t.call('PATCH', '/v1/platforms/SHOP', {
      body: { adminConsole: true, superAdmin: true },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('VALIDATION_ERROR');
    expect((await t.call('GET', '/v1/platforms/SHOP')).body.adminConsole).toBe(false);
  });
});

describe('with ADMIN_POWER_CONSOLE_ONLY=true (hardening beyond the spec)', () => {
  // A second gateway on the same database with the setting; every step goes through it, so
  // its change feed hears of its own registry changes.
  let hardened: Awaited<ReturnType<GatewayUnderTest['startAnother']>>;
  let hardenedSteps: LoginSteps;

  beforeAll(async () => {
    hardened = await t.startAnother({ ADMIN_POWER_CONSOLE_ONLY: 'true' });
    hardenedSteps = loginSteps({
      ...t,
      call: hardened.call,
      gateway: { ...t.gateway, url: hardened.url },
    });
  });

  afterAll(async () => {
    await hardened?.close();
  });

  /** A sign-in through the platform's default pair on the hardened gateway. */
  async function hardenedSignIn(platformKey: string, accountId: string, returnTo = '/') {
    const { landed } = await hardenedSteps.signIn(t.provider, platformKey, returnTo, accountId);
    expect(landed.status).toBe(302);
    return { code: handoffCodeOf(landed.location), cookie: sessionCookieOf(landed.headers).token };
  }

  it("an admin's session through a platform that is not an admin console carries no admin power", async () => {
    const { code, cookie } = await hardenedSignIn('CONFINED', 'admin');
    const exchanged = await hardenedSteps.exchange(keyOf('CONFINED'), code);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.permissions).toEqual([]);
    const origin = originOf(3500);
    for (const token of [cookie, gatewayTokenOf(exchanged)]) {
      expect(await listsPlatforms(hardened.call, token)).toBe(403);
      const patch = await hardened.call('PATCH', '/v1/platforms/OTHER', {
        ...withCookie(token, origin),
        body: { displayName: 'Taken over' },
      });
      expect(patch.status).toBe(403);
      expect(patch.body.code).toBe('FORBIDDEN');
      const rotate = await hardened.call(
        'POST',
        `/v1/platforms/OTHER/credentials/${keyOf('OTHER').id}/rotate`,
        { ...withCookie(token, origin), body: {} },
      );
      expect(rotate.status).toBe(403);
      expect((await hardened.call('GET', '/v1/admin/users', withCookie(token))).status).toBe(403);
      // Still a valid session of its user.
      expect((await hardened.call('GET', '/v1/account/me', withCookie(token))).status).toBe(200);
    }
  });

  it('the admin console platform carries the snapshot; a grant or revocation works as by default', async () => {
    const visit = await fetch(`${hardened.url}/admin/sign-in`, { redirect: 'manual' });
    expect(visit.status).toBe(302);
    const start = new URL(visit.headers.get('location') ?? '');
    const returnTo = start.searchParams.get('returnTo') ?? '/admin/';
    const consoleSession = await hardenedSignIn('ADMIN_CONSOLE', 'admin', returnTo);
    expect(await listsPlatforms(hardened.call, consoleSession.cookie)).toBe(200);

    const before = await hardenedSignIn('CONFINED', 'user-2');
    const exchanged = await hardenedSteps.exchange(keyOf('CONFINED'), before.code);
    const userId = userIdOf(exchanged);
    expect(
      (await hardened.call('PUT', `/v1/admin/users/${userId}/roles/platform_admin`)).status,
    ).toBe(200);
    const confined = await hardenedSignIn('CONFINED', 'user-2');
    const confinedExchange = await hardenedSteps.exchange(keyOf('CONFINED'), confined.code);
    expect(confinedExchange.body.permissions).toEqual([]);
    expect(await listsPlatforms(hardened.call, confined.cookie)).toBe(403);
    const viaConsole = await hardenedSignIn('ADMIN_CONSOLE', 'user-2', returnTo);
    expect(await listsPlatforms(hardened.call, viaConsole.cookie)).toBe(200);

    expect(
      (await hardened.call('DELETE', `/v1/admin/users/${userId}/roles/platform_admin`)).status,
    ).toBe(200);
    expect(await listsPlatforms(hardened.call, viaConsole.cookie)).toBe(403);
  });

  it("once an admin makes it an admin console (audited), a new sign-in's cookie is an admin credential", async () => {
    const updated = await hardened.call('PATCH', '/v1/platforms/CONFINED', {
      body: { adminConsole: true },
    });
    expect(updated.status).toBe(200);
    expect((updated.body.platform as { adminConsole: boolean }).adminConsole).toBe(true);
    const audit = await hardened.call(
      'GET',
      '/v1/audit-records?kind=platform.updated&targetKey=CONFINED',
    );
    expect(audit.body.items?.[0]?.details).toMatchObject({
      adminConsole: { from: false, to: true },
    });

    const { code, cookie } = await hardenedSignIn('CONFINED', 'admin');
    const exchanged = await hardenedSteps.exchange(keyOf('CONFINED'), code);
    expect(exchanged.body.permissions).toEqual(expect.arrayContaining(ADMIN_PERMISSIONS));
    expect((await hardened.call('GET', '/v1/admin/users', withCookie(cookie))).status).toBe(200);
    const patch = await hardened.call('PATCH', '/v1/platforms/OTHER', {
      ...withCookie(cookie, originOf(3500)),
      body: { displayName: 'Renamed by the console' },
    });
    expect(patch.status).toBe(200);
    // A user who is not an admin gains nothing from an admin console.
    const { code: userCode } = await hardenedSignIn('CONFINED', 'user-1');
    const user = await hardenedSteps.exchange(keyOf('CONFINED'), userCode);
    expect(user.body.permissions).toEqual([]);
    expect(await listsPlatforms(hardened.call, gatewayTokenOf(user))).toBe(403);
  });
});

describe("a retired platform's sessions end", () => {
  it('deactivation ends its live sessions at once; reactivation does not revive them', async () => {
    const token = gatewayTokenOf(await signedInSession('RETIRED', 'user-1'));
    expect(await introspection('RETIRED', token)).toEqual({ status: 200, active: true });
    expect((await t.call('GET', '/v1/account/me', withCookie(token))).status).toBe(200);

    expect((await t.call('DELETE', '/v1/platforms/RETIRED')).status).toBe(200);
    await waitFor(
      async () => (await t.call('GET', '/v1/account/me', withCookie(token))).status === 401,
      untilTrue('the cookie of a deactivated platform session to be refused'),
    );
    // An inactive platform's keys authenticate nothing, so it cannot introspect at all.
    expect((await introspection('RETIRED', token)).status).toBe(401);

    expect((await t.call('POST', '/v1/platforms/RETIRED/activate')).status).toBe(200);
    // A new sign-in is live: the auth-flow has heard of the reactivation.
    const fresh = gatewayTokenOf(await signedInSession('RETIRED', 'user-1'));
    await waitFor(
      async () => (await introspection('RETIRED', fresh)).active === true,
      untilTrue('a new session of the reactivated platform to be active'),
    );
    expect(await introspection('RETIRED', token)).toEqual({ status: 200, active: false });
    expect((await t.call('GET', '/v1/account/me', withCookie(token))).status).toBe(401);
  });

  it('archiving ends the sessions that outlived the deactivation; restoring revives none', async () => {
    const before = gatewayTokenOf(await signedInSession('ARCHIVED', 'user-1'));
    // A login under way while the platform is deactivated completes afterwards.
    const start = await steps.browserGet('/v1/auth/start?platformKey=ARCHIVED&returnTo=%2F');
    expect(start.status).toBe(302);
    const returned = await t.provider.browser().signIn(start.location ?? '', 'user-1');
    expect((await t.call('DELETE', '/v1/platforms/ARCHIVED')).status).toBe(200);
    const landed = await steps.browserGet(`/v1/auth/callback${returned.search}`);
    expect(landed.status).toBe(302);
    const during = sessionCookieOf(landed.headers).token;

    expect((await t.call('POST', '/v1/platforms/ARCHIVED/archive')).status).toBe(200);
    for (const token of [before, during]) {
      await waitFor(
        async () => (await t.call('GET', '/v1/account/me', withCookie(token))).status === 401,
        untilTrue('the cookie of an archived platform session to be refused'),
      );
    }
    const restored = await t.call('POST', '/v1/platforms/ARCHIVED/restore');
    expect(restored.status).toBe(200);
    const { redirectPairs } = restored.body as { redirectPairs: { id: string }[] };
    const issued = await t.call('POST', '/v1/platforms/ARCHIVED/credentials', {
      body: { kind: 'bff', redirectPairId: redirectPairs[0]?.id },
    });
    expect(issued.status).toBe(201);
    expect((await t.call('POST', '/v1/platforms/ARCHIVED/activate')).status).toBe(200);
    const fresh = await signIn('ARCHIVED', 'user-1');
    await waitFor(
      async () => (await t.call('GET', '/v1/account/me', withCookie(fresh.cookie))).status === 200,
      untilTrue('a new session of the restored platform to be accepted'),
    );
    for (const token of [before, during]) {
      expect((await t.call('GET', '/v1/account/me', withCookie(token))).status).toBe(401);
    }
  });
});

describe('a handoff code is redeemed only by the key of its callback', () => {
  it("another platform's key and the other pair's key leave the code to its own key", async () => {
    const { code } = await signIn('PAIRED', 'user-1');
    const otherPlatform = await steps.exchange(keyOf('SHOP'), code);
    expect(otherPlatform.status).toBe(404);
    const otherPair = await steps.exchange(keyOf('PAIRED', 1), code);
    expect(otherPair.status).toBe(404);
    const own = await steps.exchange(keyOf('PAIRED', 0), code);
    expect(own.status).toBe(200);
    // Once redeemed, used (spec 3.2): 404 to every key, its own included.
    expect((await steps.exchange(keyOf('PAIRED', 1), code)).status).toBe(404);
    expect((await steps.exchange(keyOf('PAIRED', 0), code)).status).toBe(404);
  });
});
