import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis, type RedisClient } from '@gateway/db';
import { createLogger } from '@gateway/telemetry';
import {
  createTestRedis,
  createTestSigningKey,
  startTestOpenIdProvider,
  type TestBrowser,
  type TestRedis,
} from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// Single logout (OpenID Connect Back-Channel Logout 1.0) over real HTTP on both auth-flow
// stores: sign-ins through a real OpenID Provider whose ID tokens carry `sid`, logout tokens
// it really sends when an identity session ends (kept by the test, then posted to the
// gateway), and tokens the test signs to break one rule at a time. What a platform sees is
// its introspection (spec 4.5).

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const accounts = ['ann', 'bob', 'cat'].map((accountId) => ({
  accountId,
  email: `${accountId}@example.test`,
  emailVerified: true,
}));

const stores = [
  { name: 'SQL', redis: false },
  { name: 'Redis', redis: true },
] as const;

type Claims = Record<string, unknown>;

function claimsOf(jwt: string): Claims {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Claims;
}

describe.each(stores)('back-channel logout on the $name store', ({ redis: withRedis }) => {
  let t: GatewayUnderTest;
  let testRedis: TestRedis | undefined;
  let redis: RedisClient | undefined;
  let shopKey: IssuedKey;
  /** Every line the gateway logs, at every level. */
  const logLines: string[] = [];

  beforeAll(async () => {
    if (withRedis) {
      testRedis = await createTestRedis();
      redis = await connectRedis({
        url: testRedis.url,
        keyPrefix: testRedis.keyPrefix,
        timeoutMs: 5_000,
      });
    }
    const logger = createLogger({
      service: 'gateway',
      level: 'trace',
      destination: { write: (line: string) => void logLines.push(line) },
    });
    t = await startGatewayUnderTest(
      {},
      { accounts, captureLogoutTokens: true },
      { logger, ...(redis === undefined ? {} : { redis }) },
    );
    const platform = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey: 'SHOP',
        displayName: 'The Shop',
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
    await t?.close();
    redis?.disconnect();
    await testRedis?.cleanup();
  });

  /** A sign-in of the account at SHOP in `browser` (a new one: a new identity session). */
  async function signIn(accountId: string, browser?: TestBrowser) {
    const steps = loginSteps(t);
    const start = await steps.browserGet(
      `/v1/auth/start?platformKey=SHOP&returnTo=${encodeURIComponent('/')}`,
    );
    const identity = browser ?? t.provider.browser();
    const callback = await identity.signIn(start.location ?? '', accountId);
    const landed = await steps.browserGet(`/v1/auth/callback${callback.search}`);
    expect(landed.status).toBe(302);
    return { token: sessionCookieOf(landed.headers).token, browser: identity };
  }

  async function active(token: string): Promise<boolean> {
    const answer = await loginSteps(t).introspect(shopKey, token);
    expect(answer.status).toBe(200);
    return answer.body.active === true;
  }

  /**
   * Ends the browser's identity session at the provider (RP-initiated logout), which sends a
   * logout token; the test keeps it instead of letting it reach the gateway.
   */
  async function endIdentitySession(browser: TestBrowser): Promise<string> {
    const before = t.provider.logoutTokens().length;
    const endSession = new URL(`${t.provider.issuer}/session/end`);
    endSession.searchParams.set('client_id', 'test-gateway');
    endSession.searchParams.set(
      'post_logout_redirect_uri',
      'http://localhost:8080/v1/auth/logged-out',
    );
    await browser.endSession(endSession.href);
    const sent = t.provider.logoutTokens().slice(before);
    expect(sent).toHaveLength(1);
    return sent[0] as string;
  }

  async function postLogoutToken(
    token: string,
    environmentKey = 'PROD',
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${t.gateway.url}/v1/auth/backchannel-logout/${environmentKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: token }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  async function expectRefused(token: string, reason: RegExp, environmentKey = 'PROD') {
    const answer = await postLogoutToken(token, environmentKey);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const body = JSON.parse(answer.text) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(reason);
  }

  /** A logout token as the provider would sign it, for `sub` and/or `sid`. */
  function logoutClaims(subject: { sub?: string; sid?: string }, extra: Claims = {}): Claims {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: t.provider.issuer,
      aud: 'test-gateway',
      iat: now,
      exp: now + 120,
      jti: `jti-${Math.random().toString(36).slice(2)}`,
      events: { [EVENT]: {} },
      ...subject,
      ...extra,
    };
  }

  const signed = (claims: Claims) => t.provider.sign(claims, { header: { typ: 'logout+jwt' } });

  async function auditRecords(): Promise<Record<string, unknown>[]> {
    const answer = await t.call(
      'GET',
      '/v1/audit-records?kind=auth.backchannel_logout&pageSize=100',
    );
    expect(answer.status).toBe(200);
    return answer.body.items ?? [];
  }

  it("ends the sessions of the token's sid, and only once the token passes every check", async () => {
    const first = await signIn('ann');
    // The same browser signs in again: the same identity session, the same sid.
    const second = await signIn('ann', first.browser);
    const otherBrowser = await signIn('ann');
    const bob = await signIn('bob');
    const genuine = await endIdentitySession(first.browser);
    const { sid, sub } = claimsOf(genuine);
    expect(typeof sid).toBe('string');
    expect(sub).toBe('ann');
    const named = { sid: sid as string, sub: 'ann' };

    // Each token breaks one rule and ends nothing.
    const stranger = await createTestSigningKey('RS256');
    await expectRefused(
      await t.provider.sign(logoutClaims(named), { key: stranger }),
      /signature is invalid/,
    );
    await expectRefused(await signed(logoutClaims(named, { aud: 'another-client' })), /aud/);
    await expectRefused(
      await signed(logoutClaims(named, { iss: 'http://127.0.0.1:1/api/auth/env/PROD' })),
      /iss/,
    );
    await expectRefused(await signed(logoutClaims(named, { nonce: 'n-1' })), /nonce/);
    await expectRefused(await signed(logoutClaims(named, { events: undefined })), /events/);
    await expectRefused(
      await signed(logoutClaims(named, { events: { 'http://example.test/other': {} } })),
      /events/,
    );
    await expectRefused(
      await signed(logoutClaims(named, { events: { [EVENT]: 'yes' } })),
      /events/,
    );
    await expectRefused(await signed(logoutClaims({})), /neither a session \(sid\) nor a subject/);
    const longAgo = Math.floor(Date.now() / 1000) - 600;
    await expectRefused(
      await signed(logoutClaims(named, { iat: longAgo, exp: longAgo + 900 })),
      /too old/,
    );
    await expectRefused(await signed(logoutClaims(named, { exp: longAgo })), /expired/);
    await expectRefused(await signed(logoutClaims(named, { jti: undefined })), /jti/);
    await expectRefused(genuine, /No active identity environment/, 'NOPE');
    for (const { token } of [first, second, otherBrowser, bob])
      expect(await active(token)).toBe(true);

    // The token the provider sent: the sessions of that identity session end, no others.
    const accepted = await postLogoutToken(genuine);
    expect(accepted.status).toBe(200);
    expect(accepted.text).toBe('');
    expect(accepted.headers.get('cache-control')).toBe('no-store');
    expect(await active(first.token)).toBe(false);
    expect(await active(second.token)).toBe(false);
    expect(await active(otherBrowser.token)).toBe(true);
    expect(await active(bob.token)).toBe(true);
    const [record] = (await auditRecords()).filter(
      (item) => (item.details as Claims).identitySessionId === sid,
    );
    expect(record).toMatchObject({
      kind: 'auth.backchannel_logout',
      targetType: 'identity_environment',
      targetKey: 'PROD',
      details: expect.objectContaining({ subject: 'ann', revokedGatewaySessions: 2 }),
    });
    expect(JSON.stringify(record)).not.toContain(genuine);

    // Sent again: refused as used, however often.
    await expectRefused(genuine, /used before/);
    // No log line carries the token, accepted or refused.
    const signature = genuine.split('.')[2] ?? '';
    expect(logLines.some((line) => line.includes(signature))).toBe(false);
    expect(logLines.some((line) => line.includes('backchannel-logout'))).toBe(true);
  });

  it('answers 503 temporarily_unavailable while the identity provider cannot be reached', async () => {
    const offline = await startTestOpenIdProvider({ environmentKey: 'OFFLINE' });
    const created = await t.call('POST', '/v1/identity-environments', {
      body: {
        environmentKey: 'OFFLINE',
        displayName: 'Offline',
        tier: 'development',
        issuer: offline.issuer,
        oidcClientId: 'test-gateway',
        oidcClientSecret: 'a-client-secret-of-the-offline-environment',
      },
    });
    expect(created.status).toBe(201);
    const now = Math.floor(Date.now() / 1000);
    const token = await offline.sign({
      iss: offline.issuer,
      aud: 'test-gateway',
      iat: now,
      jti: 'offline-jti',
      sub: 'ann',
      events: { [EVENT]: {} },
    });
    await offline.close();
    const answer = await postLogoutToken(token, 'OFFLINE');
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(answer.text)).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.any(String),
    });
  });

  it('refuses a replayed jti even when it names live sessions: a replay ends nothing more', async () => {
    const before = await signIn('cat');
    const bySubject = await signed(logoutClaims({ sub: 'cat' }));
    expect((await postLogoutToken(bySubject)).status).toBe(200);
    expect(await active(before.token)).toBe(false);
    // cat signs in again; the same token, still fresh, would end this session too.
    const after = await signIn('cat');
    await expectRefused(bySubject, /used before/);
    // Another token under the same jti is the same replay.
    const { jti } = claimsOf(bySubject);
    await expectRefused(await signed(logoutClaims({ sub: 'cat' }, { jti })), /used before/);
    expect(await active(after.token)).toBe(true);
  });

  it("with sid and sub, ends only that user's sessions of the identity session", async () => {
    const ann = await signIn('ann');
    const genuine = await endIdentitySession(ann.browser);
    const { sid } = claimsOf(genuine);
    // Another user's sub with ann's sid: no session is both.
    const mismatched = await postLogoutToken(
      await signed(logoutClaims({ sid: sid as string, sub: 'bob' })),
    );
    expect(mismatched.status).toBe(200);
    expect(await active(ann.token)).toBe(true);
    // A sub the gateway has never seen: nothing matched, and still a 200.
    const unknown = await postLogoutToken(await signed(logoutClaims({ sub: 'nobody' })));
    expect(unknown.status).toBe(200);
    expect(await active(ann.token)).toBe(true);
    expect((await postLogoutToken(genuine)).status).toBe(200);
    expect(await active(ann.token)).toBe(false);
  });

  it('with sub alone, ends every live session of that user in the environment', async () => {
    const sessions = [await signIn('bob'), await signIn('bob'), await signIn('bob')];
    const ann = await signIn('ann');
    const answer = await postLogoutToken(await signed(logoutClaims({ sub: 'bob' })));
    expect(answer.status).toBe(200);
    for (const { token } of sessions) expect(await active(token)).toBe(false);
    expect(await active(ann.token)).toBe(true);
  });

  it('answers garbage with 400 or 415, never 5xx, and ends nothing', async () => {
    const ann = await signIn('ann');
    const bodies: [string | undefined, string][] = [
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', 'logout_token=not.a.jwt'],
      ['application/x-www-form-urlencoded', 'logout_token=%ff%00'],
      ['application/x-www-form-urlencoded', `logout_token=${'e'.repeat(8000)}`],
      ['application/x-www-form-urlencoded', 'logout_token=eyJhbGciOiJub25lIn0.e30.'],
      ['application/json', '{"logout_token":"a.b.c"}'],
      [undefined, 'logout_token=a.b.c'],
    ];
    for (const [contentType, body] of bodies) {
      const response = await fetch(`${t.gateway.url}/v1/auth/backchannel-logout/PROD`, {
        method: 'POST',
        headers: contentType === undefined ? {} : { 'content-type': contentType },
        body,
      });
      expect([400, 415]).toContain(response.status);
    }
    expect(await active(ann.token)).toBe(true);
  });
});
