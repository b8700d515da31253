import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  createTestRedis,
  startTestOpenIdProvider,
  unusedLocalPort,
  type TestDatabase,
  type TestOpenIdProvider,
  type TestRedis,
} from '@gateway/testkit';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';
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

// Scale-out. Two edges and two auth-flow instances on one PostgreSQL and one
// Redis, paired edge A → auth-flow 1, edge B → auth-flow 2 (docs/decisions.md). Each sign-in
// alternates its steps between the pairs, so consecutive steps land on different edge AND
// auth-flow processes. Mid-run one pair is killed with SIGKILL (no drain): the sign-in
// in flight, the codes and sessions it issued, and the remaining sign-ins carry on on the
// other pair, because every piece of state lives in Redis or PostgreSQL.
const signIns = 20;
const killAfter = 10;

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('scale-out: two edges and two auth-flow instances, one killed mid-run', () => {
  let testDb: TestDatabase;
  let testRedis: TestRedis;
  let provider: TestOpenIdProvider;
  let ports: SplitPorts;
  let edgeB: number;
  let authFlow2: number;
  let deployment: SplitDeployment;
  const output: string[] = [];

  beforeAll(async () => {
    [testDb, testRedis, provider] = await Promise.all([
      createTestDatabase(),
      createTestRedis(),
      startTestOpenIdProvider({
        environmentKey: 'PROD',
        accounts: Array.from({ length: signIns }, (_, index) => ({
          accountId: `user-${index + 1}`,
          email: `user-${index + 1}@example.test`,
          emailVerified: true,
        })),
      }),
    ]);
    ports = {
      edge: await unusedLocalPort(),
      registry: await unusedLocalPort(),
      authFlow: await unusedLocalPort(),
      onboarding: await unusedLocalPort(),
    };
    edgeB = await unusedLocalPort();
    authFlow2 = await unusedLocalPort();
    deployment = startSplitDeployment({
      ports,
      extraEdgePorts: [edgeB],
      extraAuthFlowPorts: [authFlow2],
      env: splitTestEnv(provider, {
        databaseUrl: testDb.url,
        redisUrl: testRedis.url,
        redisKeyPrefix: testRedis.keyPrefix,
      }),
      onLine: (service, line) => output.push(`${service}: ${line}`),
    });
    await waitForReadyEdges([ports.edge, edgeB], output);
  });

  afterAll(async () => {
    await deployment.stop();
    await provider.close();
    await testRedis.cleanup();
    await testDb.drop();
  });

  it('runs whole sign-ins across both pairs, and carries on on one after the other is killed', async () => {
    const a = `http://127.0.0.1:${ports.edge}`;
    const b = `http://127.0.0.1:${edgeB}`;
    // Each edge reaches its own auth-flow: the pairing this test relies on.
    expect(deployment.processes.extraEdges).toHaveLength(1);
    expect(deployment.processes.extraAuthFlows).toHaveLength(1);
    const key: PlatformKey = await createPlatform(a, provider, 'SHOP');

    // Sign-ins 1..killAfter: start on X → provider → callback on Y → exchange on X →
    // introspect on Y, X and Y swapping each time.
    const sessions: { token: string; sub: string }[] = [];
    for (let index = 1; index <= killAfter; index++) {
      const [x, y] = index % 2 === 1 ? [a, b] : [b, a];
      const search = await startAndSignIn(x, provider, 'SHOP', `user-${index}`);
      const code = await callback(y, search);
      const session = await exchangeOk(x, key, code);
      expect(session.sub).toBe(`user-${index}`);
      expect(await (await introspect(y, key, session.token)).json()).toMatchObject({
        active: true,
        platformKey: 'SHOP',
      });
      sessions.push(session);
    }
    // Codes issued by pair B before the kill and not yet redeemed.
    const pendingCodes: { code: string; sub: string }[] = [];
    for (const index of [11, 12, 13]) {
      const search = await startAndSignIn(a, provider, 'SHOP', `user-${index}`);
      pendingCodes.push({ code: await callback(b, search), sub: `user-${index}` });
    }
    // A sign-in in flight: started on pair B, the user is at the provider when B dies.
    const inFlight = await startAndSignIn(b, provider, 'SHOP', 'user-14');

    const killedAt = Date.now();
    const [edgeBProcess] = deployment.processes.extraEdges;
    const [authFlow2Process] = deployment.processes.extraAuthFlows;
    // auth-flow 2 first: edge B, and only edge B, loses its auth-flow (the pairing is real).
    await killHard(authFlow2Process as ChildProcess);
    const bReady = await fetch(`${b}/health/ready`);
    expect(bReady.status).toBe(503);
    expect(await bReady.json()).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { checks: { registry: 'up', authFlow: 'down', onboarding: 'up' } },
    });
    expect((await fetch(`${a}/health/ready`)).status).toBe(200);
    await killHard(edgeBProcess as ChildProcess);
    await expect(fetch(`${b}/health/live`)).rejects.toThrow();

    // The in-flight sign-in finishes on pair A.
    const finished = await exchangeOk(a, key, await callback(a, inFlight));
    expect(finished.sub).toBe('user-14');
    sessions.push(finished);
    // Codes from pair B are redeemed on pair A, each once (spec 3.2: used → 404).
    for (const pending of pendingCodes) {
      const session = await exchangeOk(a, key, pending.code);
      expect(session.sub).toBe(pending.sub);
      sessions.push(session);
      expect((await exchange(a, key, pending.code)).status).toBe(404);
    }
    // The remaining sign-ins run whole on pair A.
    for (let index = 15; index <= signIns; index++) {
      const search = await startAndSignIn(a, provider, 'SHOP', `user-${index}`);
      const session = await exchangeOk(a, key, await callback(a, search));
      expect(session.sub).toBe(`user-${index}`);
      sessions.push(session);
    }
    // Every session, including those issued by the killed pair, is active on the survivor.
    expect(sessions).toHaveLength(signIns);
    for (const session of sessions) {
      const answer = await introspect(a, key, session.token);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ active: true, platformKey: 'SHOP' });
    }
    expect(new Set(sessions.map((session) => session.sub)).size).toBe(signIns);
    // The survivor stayed ready throughout (it never depended on pair B).
    expect((await fetch(`${a}/health/ready`)).status).toBe(200);
    output.push(`test: survivor carried on for ${Date.now() - killedAt} ms after the kill`);
  });
});
