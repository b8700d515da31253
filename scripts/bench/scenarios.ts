import pg from 'pg';
import { randomToken } from '@gateway/crypto';
import { basicAuthorization, pkcePair, providerBrowser } from './browser.js';
import type { GatewayUnderTest, IdentityProvider, SplitUnderTest } from './gateway.js';
import { runLoad, type LoadRequest } from './load.js';
import { cpuMs, figuresByProcess, usageOver, type BenchProcess } from './processes.js';
import { percentile, round2 } from './report.js';
import type { BenchRun, ScenarioName } from './run.js';
import { exchange, seedSignIns, signIn, type LoginTarget, type SignedIn } from './sign-in.js';

/** Baselines (a)-(d): the cheapest servers doing what a gateway request does at least. */
export async function measureBaselines(run: BenchRun): Promise<void> {
  const baselines: [ScenarioName, string][] = [
    ['baseline-node-http', 'node-http'],
    ['baseline-express', 'express'],
    ['baseline-express-redis-get', 'express-redis-get'],
    ['baseline-express-pg-select', 'express-pg-select'],
  ];
  for (const [name, kind] of baselines) {
    if (!run.wanted(name)) continue;
    // About the size of a gateway session record.
    if (kind === 'express-redis-get') {
      await run.redis.set('baseline:value', JSON.stringify({ padding: 'x'.repeat(400) }));
    }
    if (kind === 'express-pg-select') await createBaselineTable(run.db.url);
    const child = run.start(name, 'scripts/bench/targets/baseline.ts', run.dataEnv, [kind]);
    const { port } = (await child.ready) as { port: number };
    await run.measure({
      name,
      url: `http://127.0.0.1:${port}`,
      requests: [{ method: 'GET', path: '/' }],
      expectedStatuses: [200],
      serverPids: [child.pid],
    });
    await run.stop(child);
  }
}

async function createBaselineTable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `create table if not exists bench_baseline (id integer primary key, subject text not null, email text not null, status text not null);
       insert into bench_baseline select i, 'user-' || i, 'user-' || i || '@example.test', 'ACTIVE' from generate_series(1, 1000) i on conflict do nothing;
       analyze bench_baseline;`,
    );
  } finally {
    await client.end();
  }
}

type Peer = { origin: string; clientId: string; clientSecret: string; redirectUri: string };

/** The peer: oidc-provider's token introspection of its own opaque access tokens. */
export async function measurePeer(run: BenchRun): Promise<void> {
  if (!run.wanted('peer-oidc-provider-introspect')) return;
  const child = run.start(
    'peer-oidc-provider',
    'scripts/bench/targets/peer-oidc-provider.ts',
    run.dataEnv,
  );
  const peer = (await child.ready) as Peer;
  const tokens: string[] = [];
  for (let index = 0; index < run.profile.peerTokens; index += 1) {
    tokens.push(await peerAccessToken(peer, `user-${index + 1}`));
  }
  const headers = {
    authorization: basicAuthorization(peer.clientId, peer.clientSecret),
    'content-type': 'application/x-www-form-urlencoded',
  };
  const check = await fetch(`${peer.origin}/token/introspection`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ token: tokens[0] ?? '' }),
  });
  if (((await check.json()) as { active?: boolean }).active !== true) {
    throw new Error('the peer does not introspect its own token as active');
  }
  await run.measure({
    name: 'peer-oidc-provider-introspect',
    url: peer.origin,
    requests: tokens.map((token) => ({
      method: 'POST',
      path: '/token/introspection',
      headers,
      body: new URLSearchParams({ token }).toString(),
    })),
    expectedStatuses: [200],
    serverPids: [child.pid],
  });
  await run.stop(child);
}

/** An opaque access token of the peer through its authorization code flow (PKCE). */
async function peerAccessToken(peer: Peer, accountId: string): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const authorize = new URL(`${peer.origin}/auth`);
  authorize.search = new URLSearchParams({
    client_id: peer.clientId,
    response_type: 'code',
    redirect_uri: peer.redirectUri,
    scope: 'openid email',
    state: randomToken(),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  const back = await providerBrowser(peer.origin).visit(authorize.href, accountId);
  const code = back.searchParams.get('code');
  if (code === null) throw new Error(`the peer answered ${back.href}`);
  const response = await fetch(`${peer.origin}/token`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(peer.clientId, peer.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: peer.redirectUri,
      code_verifier: verifier,
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) {
    throw new Error(`the peer issued no access token: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

/**
 * Real sign-ins by returning browsers until `enough` of them (or the seeding time) passed:
 * they make S1's sessions and S2's handoff codes through the code paths users take. With
 * `split` running, a quarter of the browsers sign in through its edge: the split processes
 * get the warm-up the all-in-one gateway gets, and their codes and sessions are good in both.
 */
export async function seed(
  run: BenchRun,
  gateway: GatewayUnderTest,
  enough: number,
  split?: SplitUnderTest,
): Promise<SignedIn[]> {
  const { profile } = run;
  run.step(`seeding through real sign-ins (up to ${profile.seedSeconds}s or ${enough})`);
  const pool: SignedIn[] = [];
  const seeded = await seedSignIns({
    targets:
      split === undefined
        ? [gateway.target]
        : [gateway.target, gateway.target, gateway.target, split.target],
    workers: profile.seedWorkers,
    accounts: profile.accounts,
    deadline: Date.now() + profile.seedSeconds * 1000,
    enough: (count) => count >= enough,
    onSignedIn: (signedIn) => pool.push(signedIn),
  });
  const batches = (run.report.seeding?.batches as unknown[] | undefined) ?? [];
  run.report.seeding = {
    batches: [...batches, { ...seeded, seconds: round2(seeded.seconds) }],
  };
  run.step(
    `  ${seeded.count} sign-ins in ${seeded.seconds.toFixed(1)}s, ${seeded.failures} failed`,
  );
  return pool;
}

/**
 * S2: every request redeems a fresh code; each level gets a batch of its own. With `split`,
 * the freshest codes of each batch (`splitExchangeCodes`, at most a quarter) are redeemed
 * through the split deployment (`exchange-split`): both deployments share the database, the
 * Redis keys and the encryption keys, so a code either made is good in both. Both warm up
 * first, then the all-in-one level is measured, then the split one: the machine's first
 * seconds after a seeding (the stores settling its writes) go to the warm-ups.
 */
export async function measureExchange(
  run: BenchRun,
  gateway: GatewayUnderTest,
  firstBatch: SignedIn[],
  split?: SplitUnderTest,
): Promise<void> {
  let batch = firstBatch;
  for (const [index, connections] of run.profile.costlyConnections.entries()) {
    if (index > 0) batch = await seed(run, gateway, seedTarget(run, split), split);
    const codes = batch.map((each) => each.code);
    // The freshest codes, up to a quarter of a batch (a short --seed-seconds makes few).
    const splitShare = Math.min(run.profile.splitExchangeCodes, Math.floor(codes.length / 4));
    const splitCodes = split === undefined ? [] : codes.splice(codes.length - splitShare);
    const levels = [
      exchangeLevel(run, 'exchange', connections, codes, {
        url: gateway.url,
        authorization: gateway.bffAuthorization,
        processes: [gateway.process],
        warmup: Math.min(Math.floor(codes.length * 0.1), 500),
      }),
    ];
    if (split !== undefined) {
      // Its level is shorter, and each of its processes warms its own code: a third of its
      // codes warm it up.
      levels.push(
        exchangeLevel(run, 'exchange-split', connections, splitCodes, {
          url: split.url,
          authorization: gateway.bffAuthorization,
          processes: split.processes,
          warmup: Math.min(Math.floor(splitCodes.length / 3), 3_000),
        }),
      );
    }
    for (const level of levels) await level.warmUp();
    for (const level of levels) await level.measure();
  }
}

/** How many codes a seeding for S2 makes at most: the all-in-one's, plus the split's. */
export function seedTarget(run: BenchRun, split?: SplitUnderTest): number {
  return run.profile.seedMaxCodes + (split === undefined ? 0 : run.profile.splitExchangeCodes);
}

/** One S2 level: `codes` redeemed at `connections`, the first `warmup` of them not measured. */
function exchangeLevel(
  run: BenchRun,
  name: ScenarioName,
  connections: number,
  codes: string[],
  target: { url: string; authorization: string; processes: BenchProcess[]; warmup: number },
): { warmUp(): Promise<void>; measure(): Promise<void> } {
  let cursor = 0;
  const request: LoadRequest = {
    method: 'POST',
    path: '/v1/auth/exchange',
    headers: { authorization: target.authorization, 'content-type': 'application/json' },
    setupRequest: (each) => ({
      ...each,
      body: JSON.stringify({ code: codes[cursor++] ?? 'handoff_pool_exhausted' }),
    }),
  };
  const load = { url: target.url, requests: [request], expectedStatuses: [200] };
  // Oldest codes first, so none outlives its lifetime; the first ones warm the path.
  const { warmup } = target;
  return {
    warmUp: async () => {
      // At a few connections: the split edge sends smaller batches, so its per-call code
      // warms up on as many calls as its per-exchange code does.
      const warmupConnections = Math.min(connections, 10);
      if (warmup >= warmupConnections * 2) {
        await runLoad({ ...load, connections: warmupConnections, amount: warmup });
      }
    },
    measure: async () => {
      cursor = warmup;
      // autocannon builds each connection's next request before it knows the run is over.
      const amount = codes.length - warmup - connections;
      if (amount < connections) {
        run.report.notes.push(`${name} @${connections}: too few codes (${codes.length})`);
        return;
      }
      const split = target.processes.length > 1 ? target.processes : undefined;
      const byProcess = split === undefined ? undefined : await figuresByProcess(split);
      const usage = await usageOver(target.processes.map((each) => each.pid));
      const result = await runLoad({ ...load, connections, amount });
      run.addRow(name, connections, result, {
        ...(await usage.done(result)),
        ...(await byProcess?.done(result.requests)),
        freshCodes: amount,
      });
    },
  };
}

/**
 * S1's requests over the seeded sessions: for each session one with the BFF key and one with
 * the backend key, plus an unknown token for every second session (80% active answers).
 */
export function introspectRequests(gateway: GatewayUnderTest, sessions: string[]): LoadRequest[] {
  const request = (authorization: string, token: string): LoadRequest => ({
    method: 'POST',
    path: '/v1/auth/introspect',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return sessions.flatMap((token, index) => [
    request(gateway.bffAuthorization, token),
    request(gateway.backendAuthorization, token),
    ...(index % 2 === 0
      ? [
          request(
            index % 4 === 0 ? gateway.bffAuthorization : gateway.backendAuthorization,
            randomToken(),
          ),
        ]
      : []),
  ]);
}

/** Fails the run at once when introspection at `url` does not answer as it must. */
export async function checkIntrospection(
  url: string,
  gateway: GatewayUnderTest,
  session: string,
): Promise<void> {
  const ask = async (token: string, authorization: string) => {
    const response = await fetch(`${url}/v1/auth/introspect`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    return ((await response.json()) as { active?: boolean }).active;
  };
  if (
    (await ask(session, gateway.backendAuthorization)) !== true ||
    (await ask(session, gateway.bffAuthorization)) !== true ||
    (await ask(randomToken(), gateway.bffAuthorization)) !== false
  ) {
    throw new Error(`introspection at ${url} does not answer as expected`);
  }
}

/**
 * S4: whole sign-ins with fresh browsers (start → the provider's login and consent pages →
 * callback → exchange). A request is a sign-in; the row (named `name`: `signin`,
 * `signin-baseline` for another build, `signin-split` for the split deployment) carries the
 * gateway's CPU per sign-in (all of its `processes`, and each one's with several) and the
 * identity provider's, measured over the same seconds, and the Redis commands per sign-in.
 */
export async function measureSignIn(
  run: BenchRun,
  gateway: { target: LoginTarget; processes: BenchProcess[] },
  idp: IdentityProvider,
  name = 'signin',
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { profile } = run;
  run.step(`${name}: fresh browsers, warm-up ${profile.signInWarmupSeconds}s`);
  let turn = 0;
  const wholeSignIn = async () => {
    turn += 1;
    const accountId = `user-${(turn % profile.accounts) + 1}`;
    const signedIn = await signIn(gateway.target, providerBrowser(idp.origin), accountId);
    const answer = await exchange(gateway.target, signedIn.code);
    if (answer.status !== 200) throw new Error(`exchange answered ${answer.status}`);
  };
  await closedLoop(profile.costlyConnections[0] ?? 50, profile.signInWarmupSeconds, wholeSignIn);
  const split = gateway.processes.length > 1 ? gateway.processes : undefined;
  for (const connections of profile.costlyConnections) {
    const byProcess = split === undefined ? undefined : await figuresByProcess(split);
    const usage = await usageOver(gateway.processes.map((each) => each.pid));
    const identityBefore = await cpuMs(idp.process.pid);
    const redisBefore = await redisCalls(run.rawRedis);
    const loop = await closedLoop(connections, profile.measureSeconds, wholeSignIn);
    const redisAfter = await redisCalls(run.rawRedis);
    const identityCpu = (await cpuMs(idp.process.pid)) - identityBefore;
    const cpu = await usage.done({ durationSeconds: loop.seconds, requests: loop.completed });
    const perSignIn = (value: number) => round2(value / Math.max(loop.completed, 1));
    run.addRow(
      name,
      connections,
      {
        rps: loop.completed / loop.seconds,
        p50Ms: percentile(loop.latencies, 50),
        p99Ms: percentile(loop.latencies, 99),
        errors: loop.failed,
        requests: loop.completed,
        durationSeconds: round2(loop.seconds),
        statusCounts: {},
      },
      {
        ...cpu,
        ...(await byProcess?.done(loop.completed)),
        ...extra,
        gatewayCpuMsPerSignIn: cpu.serverCpuMsPerRequest,
        identityCpuMsPerSignIn: perSignIn(identityCpu),
        redisCommandsPerSignIn: perSignIn(redisAfter.commands - redisBefore.commands),
        redisScriptsPerSignIn: perSignIn(redisAfter.scripts - redisBefore.scripts),
        ...(loop.firstError === undefined ? {} : { firstError: loop.firstError }),
      },
    );
  }
}

/**
 * Commands the Redis server has run so far (INFO commandstats, by every client of the server;
 * a script's own calls count as commands too), without INFO itself, and the scripts among them.
 */
async function redisCalls(redis: BenchRun['rawRedis']) {
  let commands = 0;
  let scripts = 0;
  for (const [, command = '', calls] of (await redis.info('commandstats')).matchAll(
    /^cmdstat_([^:]+):calls=(\d+)/gm,
  )) {
    if (command === 'info') continue;
    commands += Number(calls);
    if (/^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/.test(command))
      scripts += Number(calls);
  }
  return { commands, scripts };
}

/** `workers` loops calling `work` for `seconds`; the latency of each completed call. */
async function closedLoop(workers: number, seconds: number, work: () => Promise<void>) {
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) {
        const begin = performance.now();
        try {
          await work();
          latencies.push(performance.now() - begin);
        } catch (error) {
          failed += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  const elapsed = (performance.now() - startedAt) / 1000;
  return { completed: latencies.length, failed, firstError, latencies, seconds: elapsed };
}

/**
 * S6: Redis bytes per live session from the sign-ins' sessions: MEMORY USAGE of a sample of
 * the `s:` keys, plus the users' `us:` index sets spread over all sessions.
 */
export async function measureSessionBytes(run: BenchRun): Promise<void> {
  const raw = run.rawRedis;
  const prefix = run.redisInfo.keyPrefix;
  const sessionKeys = await scanKeys(raw, `${prefix}s:*`);
  const userKeys = await scanKeys(raw, `${prefix}us:*`);
  const sample = sessionKeys.slice(0, 2_000);
  const sessionKeyBytes = (await sumMemoryUsage(raw, sample)) / Math.max(sample.length, 1);
  const indexBytes = (await sumMemoryUsage(raw, userKeys)) / Math.max(sessionKeys.length, 1);
  run.report.memory = {
    liveSessions: sessionKeys.length,
    users: userKeys.length,
    redisBytesPerSession: round2(sessionKeyBytes + indexBytes),
    redisSessionKeyBytes: round2(sessionKeyBytes),
    redisUserIndexBytesPerSession: round2(indexBytes),
  };
  run.step(`memory: ${JSON.stringify(run.report.memory)}`);
}

/** Full key names matching `pattern` (on a connection without a key prefix). */
async function scanKeys(redis: BenchRun['rawRedis'], pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

async function sumMemoryUsage(redis: BenchRun['rawRedis'], keys: string[]): Promise<number> {
  let total = 0;
  for (let index = 0; index < keys.length; index += 200) {
    const pipeline = redis.pipeline();
    for (const key of keys.slice(index, index + 200)) {
      pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    }
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error === null && typeof value === 'number') total += value;
    }
  }
  return total;
}
