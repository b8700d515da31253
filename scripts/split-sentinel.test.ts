import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  startRedisSentinel,
  startTestOpenIdProvider,
  unusedLocalPort,
  waitFor,
  type RedisSentinelSetup,
  type TestDatabase,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import {
  callback,
  createPlatform,
  exchangeOk,
  introspect,
  splitTestEnv,
  startAndSignIn,
  waitForReadyEdges,
} from './split-sign-in.js';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';

// The split processes in production on Redis Sentinel (REDIS_SENTINELS, no REDIS_URL): a
// sign-in, then a failover of the Redis master; the session is still active through the new
// master, and new sign-ins work on it.
describe('split mode on Redis Sentinel', () => {
  let testDb: TestDatabase;
  let sentinel: RedisSentinelSetup;
  let provider: TestOpenIdProvider;
  let ports: SplitPorts;
  let deployment: SplitDeployment;
  const output: string[] = [];

  beforeAll(async () => {
    [testDb, sentinel, provider] = await Promise.all([
      createTestDatabase(),
      startRedisSentinel({ password: 'split-sentinel' }),
      startTestOpenIdProvider({ environmentKey: 'PROD' }),
    ]);
    ports = {
      edge: await unusedLocalPort(),
      registry: await unusedLocalPort(),
      authFlow: await unusedLocalPort(),
      onboarding: await unusedLocalPort(),
    };
    deployment = startSplitDeployment({
      ports,
      env: splitTestEnv(
        provider,
        { databaseUrl: testDb.url, redisUrl: '', redisKeyPrefix: 'gw:' },
        // In production auth-flow checks that Redis keeps the sessions (the replica does).
        { ...sentinel.env, NODE_ENV: 'production', REDIS_REQUIRE_PERSISTENCE: 'true' },
      ),
      onLine: (service, line) => output.push(`${service}: ${line}`),
    });
    await waitForReadyEdges([ports.edge], output);
  });

  afterAll(async () => {
    await deployment?.stop();
    await provider?.close();
    await sentinel?.stop();
    await testDb?.drop();
  });

  it('keeps the session over a failover of the Redis master and signs in on the new one', async () => {
    const edge = `http://127.0.0.1:${ports.edge}`;
    const key = await createPlatform(edge, provider, 'SENTINEL_APP');
    const signIn = async () => {
      const code = await callback(
        edge,
        await startAndSignIn(edge, provider, 'SENTINEL_APP', 'user-1'),
      );
      return exchangeOk(edge, key, code);
    };
    const before = await signIn();

    await sentinel.failover();
    await waitForReadyEdges([ports.edge], output);
    // Requests in the switch may answer 503 (fast); then the new master answers.
    await waitFor(
      async () => {
        const answer = await introspect(edge, key, before.token);
        return answer.status === 200 && ((await answer.json()) as { active: boolean }).active;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the session through the new master' },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.join('\n')}`);
    });
    const after = await signIn();
    expect(after.sub).toBe(before.sub);
    expect(
      ((await (await introspect(edge, key, after.token)).json()) as { active: boolean }).active,
    ).toBe(true);
  });
});
