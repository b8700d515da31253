import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashToken } from '@gateway/crypto';
import { connectRedis } from '@gateway/db';
import type { Redis } from 'ioredis';
import { startFreezableRedis, type FreezableRedis } from './testing/freezable-redis.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 2.9, 3.2, 4.4 and docs/decisions.md: a handoff code is atomically single use, so a used
// code answers 404 to every key, its own included; an exchange that answered 503 spent nothing,
// so the platform's retry gets the session. Over real HTTP, with the login state in a
// redis-server of this file alone, which the test freezes (SIGSTOP) the way a stalled Redis
// host does: commands sent meanwhile wait in its socket and run at the thaw, after the
// exchange has answered 503.

/** The store's Redis command time-out, so a frozen exchange answers 503 after a second. */
const REDIS_TIMEOUT_MS = 1_000;

let server: FreezableRedis;
let redis: Redis;
let t: GatewayUnderTest;
let web: IssuedKey;
let other: IssuedKey;

beforeAll(async () => {
  server = await startFreezableRedis();
  redis = await connectRedis({
    url: `redis://127.0.0.1:${server.port}`,
    keyPrefix: 'gw:',
    timeoutMs: REDIS_TIMEOUT_MS,
  });
  const accounts = ['user-1', 'user-2', 'user-3', 'user-4', 'user-5'].map((accountId) => ({
    accountId,
    email: `${accountId}@example.test`,
    emailVerified: true,
  }));
  t = await startGatewayUnderTest({}, { accounts }, { redis });
  const platform = async (platformKey: string, port: number) => {
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey,
        displayName: platformKey,
        redirectPairs: [
          {
            label: 'web',
            returnUrl: `http://localhost:${port}/`,
            callbackUrl: `http://localhost:${port}/auth/callback`,
            isDefault: true,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    return (created.body.credentials as IssuedKey[])[0] as IssuedKey;
  };
  web = await platform('SHOP', 3000);
  other = await platform('OTHER_SHOP', 3100);
});

afterAll(async () => {
  await t?.close();
  redis?.disconnect();
  await server?.stop();
});

const steps = () => loginSteps(t);

/** A finished sign-in at SHOP: the handoff code its callback received. */
async function signedInCode(accountId: string): Promise<string> {
  const { landed } = await steps().signIn(t.provider, 'SHOP', '/orders', accountId);
  expect(landed.status).toBe(302);
  return handoffCodeOf(landed.location);
}

/** The user's live sessions, as the Redis store indexes them (us:<userId>). */
const sessionsOf = (userId: string) => redis.zcard(`us:${userId}`);

describe('a used code (spec 2.9, 3.2, 4.4)', () => {
  // Spec 2.9: "Atomically single-use"; 3.2: "used or expired | exchange | any | 404"; 4.4:
  // "invalid, expired, used or wrong-platform code: 404".
  it('answers 404 to the same code with the same key after its 200; another platform gets 404 before and after; one session', async () => {
    const code = await signedInCode('user-1');
    expect((await steps().exchange(other, code)).status).toBe(404);

    const first = await steps().exchange(web, code);
    expect(first.status).toBe(200);
    const again = await steps().exchange(web, code);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await steps().exchange(other, code)).status).toBe(404);

    const { session, user } = first.body as {
      session: { id: string; gatewayToken: string };
      user: { id: string };
    };
    const introspected = await steps().introspect(web, session.gatewayToken);
    expect(introspected.body).toMatchObject({ active: true, sessionId: session.id });
    expect(await sessionsOf(user.id)).toBe(1);
  });

  it('answers 404 when the session was signed out before the exchange', async () => {
    const { landed } = await steps().signIn(t.provider, 'SHOP', '/orders', 'user-2');
    const code = handoffCodeOf(landed.location);
    const { token } = sessionCookieOf(landed.headers);
    const logout = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: {
        cookie: `svc_auth_session=${encodeURIComponent(token)}`,
        origin: 'http://localhost:3000',
      },
    });
    expect(logout.status).toBe(200);
    expect((await steps().exchange(web, code)).status).toBe(404);
  });
});

describe('an exchange while Redis is frozen', () => {
  it('answers 503 and spends nothing; after the thaw each retry gets its session: no code lost', async () => {
    const codes = [
      await signedInCode('user-3'),
      await signedInCode('user-4'),
      await signedInCode('user-5'),
    ];
    server.freeze();
    let frozen: Array<{ status: number; body: Record<string, unknown>; retryAfter: string | null }>;
    try {
      frozen = await Promise.all(
        codes.map(async (code) => {
          const answer = await steps().exchange(web, code);
          return {
            status: answer.status,
            body: answer.body,
            retryAfter: answer.headers.get('retry-after'),
          };
        }),
      );
    } finally {
      server.thaw();
    }
    for (const answer of frozen) {
      expect(answer).toMatchObject({
        status: 503,
        body: { code: 'SERVICE_UNAVAILABLE' },
        retryAfter: '5',
      });
    }
    // This connection answers in order: once PING is back, the redeems sent while Redis was
    // frozen have run. They came after their deadline and left every code pending.
    expect(await redis.ping()).toBe('PONG');
    for (const code of codes) {
      // The handoff's key carries its session's slot tag, the code's first eight hex digits.
      const tag = /^handoff_([0-9a-f]{8})\./.exec(code)?.[1];
      expect(await redis.exists(`ho:{${tag}}${hashToken(code)}`)).toBe(1);
    }

    for (const code of codes) {
      const retried = await steps().exchange(web, code);
      expect(retried.status).toBe(200);
      const { session } = retried.body as { session: { id: string; gatewayToken: string } };
      expect((await steps().introspect(web, session.gatewayToken)).body).toMatchObject({
        active: true,
        sessionId: session.id,
      });
    }
  });
});
