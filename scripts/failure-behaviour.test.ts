import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  createTestRedis,
  startTcpProxy,
  startTestOpenIdProvider,
  unusedLocalPort,
  waitFor,
  type TcpProxy,
  type TestDatabase,
  type TestOpenIdProvider,
  type TestRedis,
} from '@gateway/testkit';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';
import {
  basicOf,
  callback,
  createPlatform,
  exchange,
  exchangeOk,
  introspect,
  type PlatformKey,
  splitTestEnv,
  startAndSignIn,
} from './split-sign-in.js';

// Failure behaviour of the split deployment (the production shape), with
// PostgreSQL and Redis reached through TCP proxies the test cuts and restores. While a
// dependency is away, readiness and every request that needs it answer 503 with the error
// body and Retry-After within the configured deadlines, never 500 and never a session or
// code accepted unchecked; once it is back, everything works again without a restart.
const DATABASE_TIMEOUT_MS = 1000;
const SERVICE_CALL_TIMEOUT_MS = 2000;
/** The slowest a 503 may take: the edge's deadline on its Connect call, plus a margin. */
const answerBoundMs = SERVICE_CALL_TIMEOUT_MS + 5_000;

type Answer = { status: number; retryAfter: string | null; body: unknown; ms: number };

async function timed(call: () => Promise<Response>): Promise<Answer> {
  const started = Date.now();
  const response = await call();
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // Not JSON: kept as text, which the assertions then reject.
  }
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body,
    ms: Date.now() - started,
  };
}

/** The fail-closed answer: 503, the `{ code, message }` body, Retry-After, in time. */
function expectUnavailable(answer: Answer, what: string): void {
  expect({ what, status: answer.status }).toEqual({ what, status: 503 });
  expect(answer.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
  expect(answer.retryAfter).toBe('5');
  expect(answer.ms).toBeLessThan(answerBoundMs);
}

describe('failure behaviour of the split deployment when PostgreSQL or Redis goes away', () => {
  let testDb: TestDatabase;
  let testRedis: TestRedis;
  let provider: TestOpenIdProvider;
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let ports: SplitPorts;
  let deployment: SplitDeployment;
  let edge: string;
  let key: PlatformKey;
  let adminToken: string;
  const output: string[] = [];

  const readyStatus = async () =>
    (await fetch(`${edge}/health/ready`).catch(() => undefined))?.status;
  const waitReady = (what: string) =>
    waitFor(async () => (await readyStatus()) === 200, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what,
    });
  const listPlatforms = () =>
    fetch(`${edge}/v1/platforms`, { headers: { authorization: `Bearer ${adminToken}` } });
  const start = () =>
    fetch(`${edge}/v1/auth/start?platformKey=SHOP&returnTo=%2F`, { redirect: 'manual' });
  /** A whole sign-in: answers a gateway token. */
  const signIn = async () =>
    (
      await exchangeOk(
        edge,
        key,
        await callback(edge, await startAndSignIn(edge, provider, 'SHOP', 'user-1')),
      )
    ).token;
  /** A sign-in up to the handoff code, not yet redeemed. */
  const issueCode = async () =>
    callback(edge, await startAndSignIn(edge, provider, 'SHOP', 'user-1'));

  beforeAll(async () => {
    [testDb, testRedis, provider] = await Promise.all([
      createTestDatabase(),
      createTestRedis(),
      startTestOpenIdProvider({ environmentKey: 'PROD' }),
    ]);
    const pgUrl = new URL(testDb.url);
    const redisUrl = new URL(testRedis.url);
    pgProxy = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    redisProxy = await startTcpProxy({
      host: redisUrl.hostname,
      port: Number(redisUrl.port || 6379),
    });
    pgUrl.hostname = '127.0.0.1';
    pgUrl.port = String(pgProxy.port);
    redisUrl.hostname = '127.0.0.1';
    redisUrl.port = String(redisProxy.port);
    ports = {
      edge: await unusedLocalPort(),
      registry: await unusedLocalPort(),
      authFlow: await unusedLocalPort(),
      onboarding: await unusedLocalPort(),
    };
    edge = `http://127.0.0.1:${ports.edge}`;
    deployment = startSplitDeployment({
      ports,
      env: splitTestEnv(
        provider,
        {
          databaseUrl: pgUrl.toString(),
          redisUrl: redisUrl.toString(),
          redisKeyPrefix: testRedis.keyPrefix,
        },
        {
          DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
          SERVICE_CALL_TIMEOUT_MS: String(SERVICE_CALL_TIMEOUT_MS),
        },
      ),
      onLine: (service, line) => output.push(`${service}: ${line}`),
    });
    await waitFor(async () => (await readyStatus()) === 200, {
      timeoutMs: 90_000,
      intervalMs: 300,
      what: 'the split edge to answer ready',
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.join('\n')}`);
    });
    adminToken = await provider.machineToken({ scope: 'platforms:admin' });
    key = await createPlatform(edge, provider, 'SHOP');
  });

  afterAll(async () => {
    await deployment.stop();
    await provider.close();
    await pgProxy.close();
    await redisProxy.close();
    await testRedis.cleanup();
    await testDb.drop();
  });

  it('answers 503 with Retry-After in time while PostgreSQL is cut, and recovers without a restart', async () => {
    const session = await signIn();
    const code = await issueCode();
    let redeemed: Awaited<ReturnType<typeof exchangeOk>> | undefined;

    await pgProxy.cut();
    try {
      const ready = await timed(() => fetch(`${edge}/health/ready`));
      expectUnavailable(ready, 'ready');
      const answers = {
        'GET /v1/platforms': await timed(listPlatforms),
        // The user's status cannot be checked (the status watch lost its connection too):
        // neither active nor inactive.
        'POST /v1/auth/introspect': await timed(() => introspect(edge, key, session)),
      };
      for (const [what, answer] of Object.entries(answers)) {
        expectUnavailable(answer, what);
      }
      // Start and exchange need no PostgreSQL. Start uses the registry's answers
      // kept since the last registry change; an exchange answers from its handoff in Redis.
      const started = await timed(start);
      expect(started.status).toBe(302);
      redeemed = await exchangeOk(edge, key, code);
    } finally {
      await pgProxy.restore();
    }

    await waitReady('ready again after PostgreSQL returned');
    expect((await listPlatforms()).status).toBe(200);
    expect((await start()).status).toBe(302);
    // The code redeemed during the outage is used (spec 3.2: used → 404).
    expect(redeemed?.token).toBeDefined();
    expect((await exchange(edge, key, code)).status).toBe(404);
    expect(await (await introspect(edge, key, session)).json()).toMatchObject({ active: true });
    expect(await (await introspect(edge, key, await signIn())).json()).toMatchObject({
      active: true,
    });
  });

  it('fails closed while Redis is cut: sessions and codes are neither accepted nor lost', async () => {
    const session = await signIn();
    const code = await issueCode();

    await redisProxy.cut();
    try {
      const ready = await timed(() => fetch(`${edge}/health/ready`));
      expectUnavailable(ready, 'ready');
      expect(ready.body).toMatchObject({ details: { checks: { authFlow: 'down' } } });
      const answers = {
        'GET /v1/auth/start': await timed(start),
        'POST /v1/auth/exchange (valid code)': await timed(() => exchange(edge, key, code)),
        // Neither active:true (unchecked) nor active:false (a valid session denied as gone).
        'POST /v1/auth/introspect (valid session)': await timed(() =>
          introspect(edge, key, session),
        ),
      };
      for (const [what, answer] of Object.entries(answers)) {
        expectUnavailable(answer, what);
      }
      // PostgreSQL alone still serves the admin API.
      expect((await listPlatforms()).status).toBe(200);
    } finally {
      await redisProxy.restore();
    }

    await waitReady('ready again after Redis returned');
    expect(await (await introspect(edge, key, session)).json()).toMatchObject({ active: true });
    // The code refused during the outage is redeemable after it, once (spec 3.2: used → 404).
    await exchangeOk(edge, key, code);
    expect((await exchange(edge, key, code)).status).toBe(404);
    expect((await start()).status).toBe(302);
  });

  it('answers 503 within the deadlines when PostgreSQL or Redis hangs instead of refusing', async () => {
    await waitReady('ready before the stalls');
    const session = await signIn();
    const code = await issueCode();

    await pgProxy.stall();
    try {
      const answers = {
        '/health/ready': await timed(() => fetch(`${edge}/health/ready`)),
        'GET /v1/platforms': await timed(listPlatforms),
        'POST /v1/auth/introspect': await timed(() => introspect(edge, key, session)),
      };
      for (const [what, answer] of Object.entries(answers)) {
        expectUnavailable(answer, what);
      }
    } finally {
      await pgProxy.restore();
    }
    await waitReady('ready again after PostgreSQL stopped hanging');

    await redisProxy.stall();
    try {
      const answers = {
        '/health/ready': await timed(() => fetch(`${edge}/health/ready`)),
        'POST /v1/auth/exchange (valid code)': await timed(() => exchange(edge, key, code)),
        'POST /v1/auth/introspect (valid session)': await timed(() =>
          introspect(edge, key, session),
        ),
      };
      for (const [what, answer] of Object.entries(answers)) {
        expectUnavailable(answer, what);
      }
    } finally {
      await redisProxy.restore();
    }
    await waitReady('ready again after Redis stopped hanging');
    expect(await (await introspect(edge, key, session)).json()).toMatchObject({ active: true });
    await exchangeOk(edge, key, code);
    expect((await exchange(edge, key, code)).status).toBe(404);
  });

  it('answers racing exchanges of one code with one 200, and 404 to every other (spec 2.9: atomically single use)', async () => {
    await waitReady('ready before the race');
    const code = await issueCode();
    const answers = await Promise.all(Array.from({ length: 8 }, () => exchange(edge, key, code)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 404, 404, 404, 404, 404, 404, 404]);
  });

  it('drains an in-flight request on SIGTERM, then every process exits 0', async () => {
    await waitReady('ready before SIGTERM');
    const session = await signIn();
    const body = JSON.stringify({ token: session });
    // A request in flight: headers and half the body sent, the rest after SIGTERM.
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${edge}/v1/auth/introspect`,
        {
          method: 'POST',
          headers: {
            authorization: basicOf(key),
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        edgeProcess.kill('SIGTERM');
        setTimeout(() => {
          // The rest of the body, 500 ms after SIGTERM, to a process still draining.
          stillRunning = edgeProcess.exitCode === null && edgeProcess.signalCode === null;
          req.end(body.slice(10));
        }, 500);
      }, 200);
    });
    const edgeProcess = deployment.processes.edge;
    let stillRunning = false;
    const edgeExited = new Promise<number | null>((resolve) =>
      edgeProcess.once('exit', (code) => resolve(code)),
    );
    const result = await answered;
    expect(stillRunning).toBe(true);
    expect(result.status).toBe(200);
    expect(JSON.parse(result.text)).toMatchObject({ active: true });
    expect(await edgeExited).toBe(0);

    // The services drain and close their PostgreSQL and Redis pools: a clean exit, not the
    // grace timer's exit 1.
    const services = [
      deployment.processes.registry,
      deployment.processes.authFlow,
      deployment.processes.onboarding,
    ];
    const codes = await Promise.all(
      services.map(
        (child) =>
          new Promise<number | null>((resolve) => {
            child.once('exit', (exitCode) => resolve(exitCode));
            child.kill('SIGTERM');
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0]);
  });
});
