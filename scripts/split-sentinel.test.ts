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
  exchange,
  exchangeOk,
  introspect,
  type PlatformKey,
  splitTestEnv,
  startAndSignIn,
  waitForReadyEdges,
} from './split-sign-in.js';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';

// The split processes in production on Redis Sentinel (REDIS_SENTINELS, no REDIS_URL):
// sign-ins, then a failover of the Redis master while a platform introspects and exchanges,
// then a crash of the (new) master under the same load; the sessions are still active
// through the promoted replica, and new sign-ins and sign-outs work on it.
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
        {
          ...sentinel.env,
          NODE_ENV: 'production',
          REDIS_REQUIRE_PERSISTENCE: 'true',
          // The load below stays under the limits (they count in Redis too).
          RATE_LIMIT_BROWSER_PER_IP: '100000',
          RATE_LIMIT_EXCHANGE_PER_CLIENT: '100000',
          RATE_LIMIT_INTROSPECT_PER_CLIENT: '100000',
        },
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

  /** A platform with four signed-in sessions and three codes not exchanged yet. */
  async function signedIn(platformKey: string) {
    const edge = `http://127.0.0.1:${ports.edge}`;
    const key = await createPlatform(edge, provider, platformKey);
    const signIn = async () =>
      callback(edge, await startAndSignIn(edge, provider, platformKey, 'user-1'));
    const live: string[] = [];
    for (let count = 0; count < 4; count += 1) {
      live.push((await exchangeOk(edge, key, await signIn())).token);
    }
    // Codes the platform exchanges only while the master fails over.
    const pending: string[] = [];
    for (let count = 0; count < 3; count += 1) pending.push(await signIn());
    return { edge, key, signIn, live, pending };
  }

  /** Waits until every live session is active and every code is settled on the new master. */
  async function recovered(
    edge: string,
    key: PlatformKey,
    live: readonly string[],
    settled: () => boolean,
  ): Promise<void> {
    await waitForReadyEdges([ports.edge], output);
    // Requests in the switch may answer 503 (fast); then the new master answers.
    await waitFor(
      async () =>
        (await Promise.all(live.map((token) => isActive(edge, key, token)))).every(Boolean) &&
        settled(),
      { timeoutMs: 60_000, intervalMs: 200, what: 'the sessions and codes on the new master' },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.join('\n')}`);
    });
  }

  it('keeps every session over a failover of the Redis master under introspections and exchanges, loses no code, redeems none twice, and signs in and out on the new master', async () => {
    const { edge, key, signIn, live, pending } = await signedIn('SENTINEL_APP');
    const load = startLoad(edge, key, live, pending);

    await sentinel.failover();
    await recovered(edge, key, live, () => pending.every((code) => load.tokensOf(code).size > 0));
    const { unexpected, introspections } = await load.stop();
    expect(introspections).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);
    // One session per code, and a used code answers 404 on the new master (spec 3.2).
    expect(pending.map((code) => load.tokensOf(code).size)).toEqual(pending.map(() => 1));
    for (const code of pending) expect((await exchange(edge, key, code)).status).toBe(404);

    const after = await exchangeOk(edge, key, await signIn());
    await expect(isActive(edge, key, after.token)).resolves.toBe(true);
    const logout = await fetch(`${edge}/v1/auth/logout`, {
      method: 'POST',
      headers: {
        cookie: `svc_auth_session=${encodeURIComponent(after.token)}`,
        origin: 'http://localhost:3000',
      },
    });
    expect(logout.status).toBe(200);
    await expect(isActive(edge, key, after.token)).resolves.toBe(false);
  });

  // The master crashes (SIGKILL) under load, with no failover planned: what it took after the
  // replica caught up may be lost with it. A code whose redeem was lost may answer 404
  // afterwards; it must never give a second gateway session.
  it('keeps every replicated session when the Redis master is killed under introspections and exchanges, redeems no code twice, and signs in again on the promoted replica', async () => {
    const { edge, key, signIn, live, pending } = await signedIn('SENTINEL_KILL_APP');
    const load = startLoad(edge, key, live, pending, { codeMayBeLost: true });

    await sentinel.killMaster();
    await recovered(edge, key, live, () =>
      pending.every((code) => load.tokensOf(code).size > 0 || load.refused(code)),
    );
    const { unexpected, introspections } = await load.stop();
    expect(introspections).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);
    // At most one session per code, whether its redeem survived the crash or not.
    expect(pending.filter((code) => load.tokensOf(code).size > 1)).toEqual([]);

    const after = await exchangeOk(edge, key, await signIn());
    await expect(isActive(edge, key, after.token)).resolves.toBe(true);
  });
});

async function isActive(edge: string, key: PlatformKey, token: string): Promise<boolean> {
  const answer = await introspect(edge, key, token);
  return answer.status === 200 && ((await answer.json()) as { active: boolean }).active;
}

/**
 * Introspects every live session and exchanges every pending code, over and over, until
 * stopped. Allowed answers: active sessions and exchanged codes, or 503 while Redis moves;
 * with `codeMayBeLost`, a code refused (404) too, as one whose redeem died with the master.
 * Anything else (a session inactive, a code refused otherwise) is recorded as unexpected.
 */
function startLoad(
  edge: string,
  key: PlatformKey,
  live: readonly string[],
  pending: readonly string[],
  options: { codeMayBeLost?: boolean } = {},
) {
  const answered = new Map<string, Set<string>>(pending.map((code) => [code, new Set()]));
  const refused = new Set<string>();
  const unexpected: string[] = [];
  let introspections = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const token of live) {
        const answer = await introspect(edge, key, token);
        introspections += 1;
        const body = (await answer.json()) as { active?: boolean };
        if (answer.status === 200 && body.active !== true) unexpected.push('a session inactive');
        if (answer.status !== 200 && answer.status !== 503) {
          unexpected.push(`introspection ${answer.status}`);
        }
      }
      for (const code of pending) {
        // A platform exchanges a code until its first 200 (or a 404: used or lost).
        if ((answered.get(code)?.size ?? 0) > 0 || refused.has(code)) continue;
        const answer = await exchange(edge, key, code);
        const body = (await answer.json()) as { session?: { gatewayToken: string } };
        if (answer.status === 200 && body.session)
          answered.get(code)?.add(body.session.gatewayToken);
        else if (answer.status === 404 && options.codeMayBeLost === true) refused.add(code);
        else if (answer.status !== 503) unexpected.push(`exchange ${answer.status}`);
      }
    }
  })();
  return {
    tokensOf: (code: string) => answered.get(code) ?? new Set<string>(),
    refused: (code: string) => refused.has(code),
    async stop() {
      running = false;
      await loop;
      return { unexpected, introspections };
    },
  };
}
