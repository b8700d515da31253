import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@gateway/config';
import { generateEncryptionKeySpec } from '@gateway/crypto';
import { connectRedis, createDatabase, type Database } from '@gateway/db';
import { createLogger } from '@gateway/telemetry';
import {
  createTestDatabase,
  startRedisCluster,
  waitFor,
  type RedisCluster,
  type TestDatabase,
} from '@gateway/testkit';
import type { Cluster } from 'ioredis';
import { startGateway, type RunningGateway } from './gateway-runtime.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// The all-in-one gateway wired to a Redis Cluster (config.redis in Cluster mode): the
// auth-flow store answers the readiness check through it, the edge's rate limits count in it,
// and the login flow runs on it, also over a failover of the shard that holds a session and
// over a crash of that shard's master.
// One Cluster for the file.
let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

describe('the all-in-one gateway on a Redis Cluster', () => {
  let testDb: TestDatabase;
  let db: Database;
  let redis: Cluster;
  let gateway: RunningGateway;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    const config = loadConfig({
      IDENTITY_ISSUER: 'http://localhost:8080/api/auth/env/PROD',
      GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
      LOG_LEVEL: 'silent',
      RATE_LIMIT_BROWSER_PER_IP: '1',
      REDIS_KEY_PREFIX: 'gw:',
      ...cluster.env,
    });
    expect(config.redis?.mode).toBe('cluster');
    if (config.redis?.mode !== 'cluster') throw new Error('not Cluster mode');
    db = await createDatabase({ url: testDb.url });
    redis = await connectRedis({
      ...config.redis,
      keyPrefix: config.redisKeyPrefix,
      timeoutMs: config.databaseTimeoutMs,
    });
    const logger = createLogger({ service: 'test', level: 'silent' });
    gateway = await startGateway({ config, logger, db, redis, port: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    if (redis?.status !== 'end') redis?.disconnect();
    await db?.close();
    await testDb?.drop();
  });

  it('answers ready, auth-flow reaching the Cluster', async () => {
    const ready = await fetch(`${gateway.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { authFlow: 'up' } });
  });

  it('counts the rate limits in the Cluster', async () => {
    const start = () =>
      fetch(`${gateway.url}/v1/auth/start?platformKey=NONE&returnTo=%2F`, { redirect: 'manual' });
    expect((await start()).status).not.toBe(429);
    expect((await start()).status).toBe(429);
    const keys: string[] = [];
    for (const node of redis.nodes('master')) {
      keys.push(...(await node.keys('gw:rl:*')));
    }
    expect(keys.length).toBeGreaterThan(0);
  });
});

const ACCOUNTS = Array.from({ length: 8 }, (_, index) => `user-${index + 1}`);

/** What an exchange hands the platform. */
type Exchanged = { session: { id: string; gatewayToken: string }; user: { id: string } };

describe('the login flow on a Redis Cluster', () => {
  let redis: Cluster;
  let t: GatewayUnderTest;
  let shop: IssuedKey;
  const steps = () => loginSteps(t);

  beforeAll(async () => {
    // Named by REDIS_CLUSTER_NODES, as a deployment names it.
    const many = '100000';
    const env = {
      ...cluster.env,
      REDIS_KEY_PREFIX: 'login:',
      RATE_LIMIT_BROWSER_PER_IP: many,
      RATE_LIMIT_EXCHANGE_PER_CLIENT: many,
      RATE_LIMIT_INTROSPECT_PER_CLIENT: many,
    };
    const config = loadConfig({
      IDENTITY_ISSUER: 'http://localhost:8080/api/auth/env/PROD',
      GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
      ...env,
    });
    if (config.redis?.mode !== 'cluster') throw new Error('not Cluster mode');
    redis = await connectRedis({
      ...config.redis,
      keyPrefix: config.redisKeyPrefix,
      timeoutMs: config.databaseTimeoutMs,
    });
    t = await startGatewayUnderTest(
      env,
      {
        accounts: ACCOUNTS.map((accountId) => ({
          accountId,
          email: `${accountId}@example.test`,
          emailVerified: true,
        })),
        captureLogoutTokens: true,
      },
      { redis },
    );
    const created = await t.call('POST', '/v1/platforms', {
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
    expect(created.status).toBe(201);
    shop = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
  });

  afterAll(async () => {
    await t?.close();
    redis?.disconnect();
  });

  /** Start, the provider's sign-in and the callback: the code and the session cookie. */
  async function signIn(accountId: string): Promise<{ code: string; token: string }> {
    const { landed } = await steps().signIn(t.provider, 'SHOP', '/orders', accountId);
    if (landed.status !== 302) throw new Error(`the callback answered ${landed.status}`);
    return { code: handoffCodeOf(landed.location), token: sessionCookieOf(landed.headers).token };
  }

  async function exchanged(code: string): Promise<Exchanged> {
    const answer = await steps().exchange(shop, code);
    if (answer.status !== 200) throw new Error(`the exchange answered ${answer.status}`);
    return answer.body as Exchanged;
  }

  const isActive = async (token: string) => {
    const answer = await steps().introspect(shop, token);
    return answer.status === 200 && answer.body.active === true;
  };

  it('signs in: start, callback, exchange, introspect, logout; the code and the gateway token carry one slot tag', async () => {
    const { code, token } = await signIn('user-1');
    const { session } = await exchanged(code);
    expect(session.gatewayToken).toBe(token);
    expect(token.slice(0, 8)).toBe(code.slice('handoff_'.length, 'handoff_'.length + 8));
    expect((await steps().introspect(shop, token)).body).toMatchObject({
      active: true,
      sessionId: session.id,
    });

    const logout = await t.call('POST', '/v1/auth/logout', {
      token: null,
      headers: {
        cookie: `svc_auth_session=${encodeURIComponent(token)}`,
        origin: 'http://localhost:3000',
      },
    });
    expect(logout.status).toBe(200);
    expect((await steps().introspect(shop, token)).body).toMatchObject({ active: false });
    expect((await steps().exchange(shop, code)).status).toBe(404);
  });

  it("ends an identity session's sessions, each in a slot of its own, and a user's, on a back-channel logout", async () => {
    // Two sign-ins in one browser (one identity session, one sid), one in another browser.
    const browser = t.provider.browser();
    const signInWith = async (accountId: string, identity = t.provider.browser()) => {
      const start = await steps().browserGet(`/v1/auth/start?platformKey=SHOP&returnTo=%2F`);
      const callback = await identity.signIn(start.location ?? '', accountId);
      const landed = await steps().browserGet(`/v1/auth/callback${callback.search}`);
      return sessionCookieOf(landed.headers).token;
    };
    const sameSid = [await signInWith('user-7', browser), await signInWith('user-7', browser)];
    const otherSid = await signInWith('user-7');
    const others = [await signInWith('user-8'), await signInWith('user-8')];
    await browser.endSession(
      `${t.provider.issuer}/session/end?client_id=test-gateway&post_logout_redirect_uri=${encodeURIComponent('http://localhost:8080/v1/auth/logged-out')}`,
    );
    const [logoutToken] = t.provider.logoutTokens();
    const post = (token: string) =>
      fetch(`${t.gateway.url}/v1/auth/backchannel-logout/PROD`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }),
      });
    expect((await post(logoutToken ?? '')).status).toBe(200);
    expect(await Promise.all(sameSid.map(isActive))).toEqual([false, false]);
    expect(await isActive(otherSid)).toBe(true);
    expect((await post(logoutToken ?? '')).status).toBe(400);

    // By `sub` alone: every session of user-8, wherever its slot.
    const now = Math.floor(Date.now() / 1000);
    const bySubject = await t.provider.sign({
      iss: t.provider.issuer,
      aud: 'test-gateway',
      iat: now,
      jti: 'cluster-user-8',
      sub: 'user-8',
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
    expect((await post(bySubject)).status).toBe(200);
    expect(await Promise.all(others.map(isActive))).toEqual([false, false]);
    expect(await isActive(otherSid)).toBe(true);
  });

  it('keeps every session over a failover of the shard holding one, under introspections and exchanges; no code is lost or redeemed twice, and sign-ins work again', async () => {
    const { live, pending } = await sessionsAndPendingCodes();
    const load = startLoad(live, pending);

    const [target] = live;
    const moved = await cluster.failover(`{${target?.token.slice(0, 8)}}`);
    expect(moved.to).not.toEqual(moved.from);
    // Back on the new master: every session active, every code exchanged (retried after 503).
    await waitFor(
      async () =>
        (await Promise.all(live.map(({ token }) => isActive(token)))).every(Boolean) &&
        pending.every((code) => load.sessionsOf(code).size > 0),
      { timeoutMs: 60_000, intervalMs: 100, what: 'the sessions and codes on the new master' },
    );
    const { unexpected, introspections } = await load.stop();
    expect(introspections).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);
    // One session per code, and a used code answers 404 on the new master (spec 3.2).
    expect(pending.map((code) => load.sessionsOf(code).size)).toEqual(pending.map(() => 1));
    for (const code of pending) expect((await steps().exchange(shop, code)).status).toBe(404);

    // A new login in the failed-over slot's shard and elsewhere, with no restart.
    const again = await signIn('user-2');
    const { session } = await exchanged(again.code);
    await expect(isActive(session.gatewayToken)).resolves.toBe(true);
  });

  // The master of a session's shard crashes (SIGKILL) under load: what it took after its
  // replica caught up may be lost with it. A code whose redeem was lost may answer 404
  // afterwards; it must never give a second gateway session.
  it('keeps every replicated session when the master of its shard is killed under introspections and exchanges, redeems no code twice, and signs in again', async () => {
    const { live, pending } = await sessionsAndPendingCodes();
    const load = startLoad(live, pending, { codeMayBeLost: true });

    const [target] = live;
    await cluster.killMaster(`{${target?.token.slice(0, 8)}}`);
    await waitFor(
      async () =>
        (await Promise.all(live.map(({ token }) => isActive(token)))).every(Boolean) &&
        pending.every((code) => load.sessionsOf(code).size > 0 || load.refused(code)),
      { timeoutMs: 60_000, intervalMs: 100, what: 'the sessions and codes on the replica' },
    );
    const { unexpected, introspections } = await load.stop();
    expect(introspections).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);
    // At most one session per code, whether its redeem survived the crash or not.
    expect(pending.filter((code) => load.sessionsOf(code).size > 1)).toEqual([]);

    const again = await signIn('user-2');
    const { session } = await exchanged(again.code);
    await expect(isActive(session.gatewayToken)).resolves.toBe(true);
  });

  /**
   * Four signed-in sessions, and three codes the platform exchanges only while the shard
   * fails over.
   */
  async function sessionsAndPendingCodes() {
    const live: { id: string; token: string }[] = [];
    for (const accountId of ACCOUNTS.slice(1, 5)) {
      const { session } = await exchanged((await signIn(accountId)).code);
      live.push({ id: session.id, token: session.gatewayToken });
    }
    const pending: string[] = [];
    for (const accountId of ACCOUNTS.slice(5, 8)) pending.push((await signIn(accountId)).code);
    return { live, pending };
  }

  /**
   * Introspects every live session and exchanges every pending code, over and over, until
   * stopped. Allowed answers: active sessions and exchanged codes, or 503 while Redis moves;
   * with `codeMayBeLost`, a code refused (404) too, as one whose redeem died with a master.
   * Anything else (a session inactive, a code refused otherwise) is recorded as unexpected.
   */
  function startLoad(
    live: { id: string; token: string }[],
    pending: string[],
    options: { codeMayBeLost?: boolean } = {},
  ) {
    const answered = new Map<string, Set<string>>(pending.map((code) => [code, new Set()]));
    const refused = new Set<string>();
    const unexpected: string[] = [];
    let introspections = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        for (const { id, token } of live) {
          const answer = await steps().introspect(shop, token);
          introspections += 1;
          if (answer.status === 200 && answer.body.active !== true)
            unexpected.push(`${id} inactive`);
          if (answer.status !== 200 && answer.status !== 503) {
            unexpected.push(`introspection ${answer.status}`);
          }
        }
        for (const code of pending) {
          // A platform exchanges a code until its first 200 (or a 404: used or lost).
          if ((answered.get(code)?.size ?? 0) > 0 || refused.has(code)) continue;
          const answer = await steps().exchange(shop, code);
          const { session } = answer.body as Partial<Exchanged>;
          if (answer.status === 200 && session) answered.get(code)?.add(session.id);
          else if (answer.status === 404 && options.codeMayBeLost === true) refused.add(code);
          else if (answer.status !== 503) unexpected.push(`exchange ${answer.status}`);
        }
      }
    })();
    return {
      sessionsOf: (code: string) => answered.get(code) ?? new Set<string>(),
      refused: (code: string) => refused.has(code),
      async stop() {
        running = false;
        await loop;
        return { unexpected, introspections };
      },
    };
  }
});
