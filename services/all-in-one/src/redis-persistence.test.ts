import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis, type RedisClient } from '@gateway/db';
import {
  createTestDatabase,
  startRedisServer,
  unusedLocalPort,
  waitFor,
  type PrivateRedis,
  type TestDatabase,
} from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { handoffCodeOf, loginSteps, type IssuedKey } from './testing/login-steps.js';

// Sessions in a Redis that writes its append-only file survive a restart of that Redis
// (SHUTDOWN, then redis-server again on the same folder), as docker-compose runs it; and
// `start:gateway` in production refuses a Redis that keeps no copy of them when told to.

const ACCOUNTS = ['user-1', 'user-2', 'user-3'];

describe('sessions in a Redis with AOF', () => {
  let redisServer: PrivateRedis;
  let redis: RedisClient;
  let t: GatewayUnderTest;
  let key: IssuedKey;

  beforeAll(async () => {
    redisServer = await startRedisServer({ persistence: 'aof', password: 'persistence-test' });
    redis = await connectRedis({ ...redisServer.connection, keyPrefix: 'gw:', timeoutMs: 2_000 });
    t = await startGatewayUnderTest(
      {},
      {
        accounts: ACCOUNTS.map((accountId) => ({
          accountId,
          email: `${accountId}@example.test`,
          emailVerified: true,
          name: accountId,
        })),
      },
      { redis },
    );
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey: 'KEPT',
        displayName: 'Kept sessions',
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
    key = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
  });

  afterAll(async () => {
    await t?.close();
    if (redis?.status !== 'end') redis?.disconnect();
    await redisServer?.stop();
  });

  it('are all still active after Redis restarts on the same folder', async () => {
    const steps = loginSteps(t);
    const tokens: string[] = [];
    for (const accountId of ACCOUNTS) {
      const { landed } = await steps.signIn(t.provider, 'KEPT', '/', accountId);
      const exchanged = await steps.exchange(key, handoffCodeOf(landed.location));
      expect(exchanged.status).toBe(200);
      tokens.push((exchanged.body.session as { gatewayToken: string }).gatewayToken);
    }
    for (const token of tokens) {
      expect((await steps.introspect(key, token)).body).toMatchObject({ active: true });
    }

    await redisServer.restart();
    // The gateway's connection reconnects on its own; readiness asks Redis.
    await waitFor(async () => (await fetch(`${t.gateway.url}/health/ready`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the gateway to be ready again on the restarted Redis',
    });
    const answers = await Promise.all(tokens.map((token) => steps.introspect(key, token)));
    expect(answers.map((answer) => answer.body.active)).toEqual(tokens.map(() => true));
  });
});

describe('start:gateway in production on a Redis without persistence', () => {
  const entry = fileURLToPath(new URL('./gateway-main.ts', import.meta.url));
  let testDb: TestDatabase;
  let redisServer: PrivateRedis;
  beforeAll(async () => {
    [testDb, redisServer] = await Promise.all([createTestDatabase(), startRedisServer()]);
  });
  afterAll(async () => {
    await redisServer?.stop();
    await testDb?.drop();
  });

  /** Runs the process until `done(output)` or its exit; answers its output and exit code. */
  async function run(extra: Record<string, string>, done: (output: string) => boolean) {
    const child = spawn(
      process.execPath,
      ['--conditions=@gateway/source', '--import', 'tsx', entry],
      {
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          PORT: String(await unusedLocalPort()),
          IDENTITY_ISSUER: 'https://id.example.com',
          GATEWAY_ENCRYPTION_KEYS: `k1:${'A'.repeat(43)}`,
          DATABASE_URL: testDb.url,
          ...redisServer.env,
          ...extra,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(async () => done(output) || child.exitCode !== null, {
        timeoutMs: 120_000,
        intervalMs: 100,
        what: 'the gateway process to decide',
      });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    return { output, code: await exited };
  }

  // The warning without REDIS_REQUIRE_PERSISTENCE is the same check's other answer
  // (packages/db, redis-durability.test.ts); starting a second process costs more than it tells.
  it('refuses to start when persistence is required, saying why', async () => {
    const refused = await run({ REDIS_REQUIRE_PERSISTENCE: 'true' }, () => false);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      'Refusing to start: REDIS_REQUIRE_PERSISTENCE is true, and Redis keeps no copy of the ' +
        'sessions (no AOF or RDB persistence and no replica)',
    );
  });
});
