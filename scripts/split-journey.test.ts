import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  createTestDatabase,
  createTestRedis,
  startTestOpenIdProvider,
  unusedLocalPort,
  type TestDatabase,
  type TestOpenIdProvider,
  type TestRedis,
} from '@gateway/testkit';
import {
  callback,
  createPlatform,
  exchange,
  splitTestEnv,
  startAndSignIn,
  waitForReadyEdges,
} from './split-sign-in.js';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';

// The services as separate processes on PostgreSQL and Redis, two
// stateless edge instances; the login starts on one and finishes on the other.
describe('a sign-in across two edge instances in split mode', () => {
  let testDb: TestDatabase;
  let testRedis: TestRedis;
  let provider: TestOpenIdProvider;
  let ports: SplitPorts;
  let secondEdge: number;
  let deployment: SplitDeployment;
  const output: string[] = [];

  beforeAll(async () => {
    [testDb, testRedis, provider] = await Promise.all([
      createTestDatabase(),
      createTestRedis(),
      startTestOpenIdProvider({ environmentKey: 'PROD' }),
    ]);
    ports = {
      edge: await unusedLocalPort(),
      registry: await unusedLocalPort(),
      authFlow: await unusedLocalPort(),
      onboarding: await unusedLocalPort(),
    };
    secondEdge = await unusedLocalPort();
    deployment = startSplitDeployment({
      ports,
      extraEdgePorts: [secondEdge],
      env: splitTestEnv(provider, {
        databaseUrl: testDb.url,
        redisUrl: testRedis.url,
        redisKeyPrefix: testRedis.keyPrefix,
      }),
      onLine: (service, line) => output.push(`${service}: ${line}`),
    });
    await waitForReadyEdges([ports.edge, secondEdge], output);
  });

  afterAll(async () => {
    await deployment.stop();
    await provider.close();
    await testRedis.cleanup();
    await testDb.drop();
  });

  it('starts on one edge and completes the callback, exchange and introspection on the other', async () => {
    const first = `http://127.0.0.1:${ports.edge}`;
    const second = `http://127.0.0.1:${secondEdge}`;
    const admin = {
      authorization: `Bearer ${await provider.machineToken({ scope: 'platforms:admin' })}`,
    };
    const created = await fetch(`${first}/v1/platforms`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        platformKey: 'SHOP',
        displayName: 'Shop',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: 'http://localhost:3000/',
            callbackUrl: 'http://localhost:3000/cb',
            isDefault: true,
          },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const [key] = (
      (await created.json()) as { credentials: { clientId: string; clientSecret: string }[] }
    ).credentials;
    const basic = `Basic ${Buffer.from(`${key?.clientId}:${key?.clientSecret}`).toString('base64')}`;

    const start = await fetch(`${first}/v1/auth/start?platformKey=SHOP&returnTo=%2F`, {
      redirect: 'manual',
    });
    expect(start.status).toBe(302);
    const callback = await provider.browser().signIn(start.headers.get('location') ?? '', 'user-1');
    const landed = await fetch(`${second}/v1/auth/callback${callback.search}`, {
      redirect: 'manual',
    });
    expect(landed.status).toBe(302);
    const code = new URL(landed.headers.get('location') ?? '').searchParams.get('code');
    expect(code).toMatch(/^handoff_/);

    const exchanged = await fetch(`${second}/v1/auth/exchange`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(exchanged.status).toBe(200);
    const body = (await exchanged.json()) as {
      session: { gatewayToken: string };
      user: { sub: string };
    };
    expect(body.user.sub).toBe('user-1');

    const introspect = (token: string) =>
      fetch(`${first}/v1/auth/introspect`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
    const introspected = await introspect(body.session.gatewayToken);
    expect(await introspected.json()).toMatchObject({ active: true, platformKey: 'SHOP' });
    // Introspections arriving together share the edge's HTTP/2 connection to auth-flow, a
    // stream each: each gets its own answer.
    const tokens = Array.from({ length: 24 }, (_, index) =>
      index % 3 === 0 ? body.session.gatewayToken : `${body.session.gatewayToken.slice(0, -4)}zzzz`,
    );
    const answers = await Promise.all(
      tokens.map(async (token) => {
        const answer = await introspect(token);
        return {
          status: answer.status,
          active: ((await answer.json()) as { active: boolean }).active,
        };
      }),
    );
    expect(answers).toEqual(
      tokens.map((token) => ({ status: 200, active: token === body.session.gatewayToken })),
    );
    // The session lives in Redis, not in either edge: its key is there under the prefix.
    const redis = new Redis(testRedis.url);
    try {
      // SCAN walks the whole keyspace in steps (other test files share this Redis).
      const sessionKeys: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(
          cursor,
          'MATCH',
          `${testRedis.keyPrefix}s:*`,
          'COUNT',
          1000,
        );
        sessionKeys.push(...keys);
        cursor = next;
      } while (cursor !== '0');
      expect(sessionKeys.length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });

  it('answers starts and exchanges arriving together each on their own', async () => {
    const edge = `http://127.0.0.1:${ports.edge}`;
    const key = await createPlatform(edge, provider, 'TOGETHER');
    // The edge sends the starts of one turn to auth-flow as one call: an unknown platform
    // among them is refused, the others start.
    const starts = await Promise.all(
      ['TOGETHER', 'NOPE', 'TOGETHER', 'NOPE'].map((platformKey) =>
        fetch(`${edge}/v1/auth/start?platformKey=${platformKey}&returnTo=%2F`, {
          redirect: 'manual',
        }),
      ),
    );
    expect(starts.map((start) => start.status)).toEqual([302, 404, 302, 404]);
    const codes: string[] = [];
    for (const account of ['user-1', 'user-1']) {
      codes.push(await callback(edge, await startAndSignIn(edge, provider, 'TOGETHER', account)));
    }
    // Each code twice and a made-up one, at once: each code is redeemed exactly once.
    const attempts = [...codes, ...codes, `handoff_${'x'.repeat(43)}`];
    const statuses = await Promise.all(
      attempts.map(async (code) => (await exchange(edge, key, code)).status),
    );
    for (const [index] of codes.entries()) {
      expect([statuses[index], statuses[index + codes.length]].sort()).toEqual([200, 404]);
    }
    expect(statuses.at(-1)).toBe(404);
  });
});
