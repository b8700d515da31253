import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createRedisAuthFlowStore } from '@gateway/auth-flow';
import { generateEncryptionKeySpec, hashToken, randomToken } from '@gateway/crypto';
import {
  createTestDatabase,
  createTestRedis,
  unusedLocalPort,
  waitFor,
  type TestClient,
  type TestDatabase,
  type TestRedis,
} from '@gateway/testkit';
import { basicAuthorization, pkcePair, providerBrowser } from './browser.js';
import { runOpenLoopInWorker } from './open-loop-worker.js';
import { runLoad, type LoadRequest, type LoadResult } from './load.js';
import {
  allocationCommand,
  cpuMs,
  machineShare,
  machineTicks,
  logTail,
  repoRoot,
  rssBytes,
  sampleRss,
  startTsxProcess,
  totalCpuSplitMs,
  type BenchProcess,
} from './processes.js';
import {
  addRatios,
  describeMachine,
  formatTable,
  formatTargets,
  percentile,
  round2,
  type Machine,
  type ResultRow,
  type TargetCheck,
} from './report.js';
import { exchange, seedSignIns, signIn, type LoginTarget, type SignedIn } from './sign-in.js';

export const SCENARIOS = [
  'baseline-node-http',
  'baseline-express',
  'baseline-express-redis-get',
  'baseline-express-pg-select',
  'peer-oidc-provider-introspect',
  'introspect-allinone',
  'introspect-split',
  'exchange',
  'start',
  'signin',
  'overload',
  'memory',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export type BenchOptions = {
  quick: boolean;
  /** Where the JSON report goes (default bench-results/latest.json). */
  out: string;
  /** Only these scenarios (default: all). */
  only?: ScenarioName[];
  /** V8 CPU profiles of the all-in-one gateway (and the split edge and auth-flow) in <out dir>/cpu-prof. */
  cpuProf?: boolean;
  /**
   * Allocation profiles of the all-in-one gateway, one per measured level, in
   * <out dir>/alloc-prof (allocation-sampling.ts; read with cpu-profile-summary.ts).
   */
  allocProf?: boolean;
  /**
   * With allocProf: only what survived a scavenge (promoted to the old generation, or alive
   * at the end), in `<scenario>-<connections>.survivors.heapprofile`.
   */
  allocSurvivors?: boolean;
  /** Longest time spent producing handoff codes for each S2 level (default 290 s; --quick 20 s). */
  seedSeconds?: number;
  /** LOG_LEVEL of the gateway processes (default info, as deployed: one line per request). */
  logLevel?: string;
  log?: (line: string) => void;
};

type Profile = {
  warmupSeconds: number;
  /**
   * S4's warm-up: a sign-in runs several times the code of an introspection, and with 3 s
   * (about 250 sign-ins) V8 was still compiling it during the first level (its helper
   * threads' CPU counts in the gateway's), which then read 15-20% above the second.
   */
  signInWarmupSeconds: number;
  measureSeconds: number;
  /**
   * Each S5 level. RSS growth compares medians, and V8's old generation swings between
   * collections (about 60 to 140 MiB used, one collection every 5-10 s under load): 10 s
   * medians caught one or two swings and moved by up to 25% between levels either way; over
   * 30 s they moved by 0-8% in repeated runs.
   */
  overloadSeconds: number;
  connections: number[];
  /** Connections of S2 and S4, whose every request costs a real sign-in. */
  costlyConnections: number[];
  /** Identity accounts (one gateway user each). */
  accounts: number;
  /** Concurrent browsers while seeding. */
  seedWorkers: number;
  /** Longest time spent producing handoff codes for each S2 level (they live 300 s at most). */
  seedSeconds: number;
  /** Stop seeding a level's codes at this many. */
  seedMaxCodes: number;
  /** Sessions introspected in rotation by S1. */
  introspectSessions: number;
  /** Live sessions for S6. */
  memorySessions: number;
};

const FULL: Profile = {
  warmupSeconds: 3,
  signInWarmupSeconds: 10,
  measureSeconds: 10,
  overloadSeconds: 30,
  connections: [50, 100],
  costlyConnections: [50, 100],
  accounts: 300,
  seedWorkers: 24,
  // S2 needs 10 s of steady load per level. Exchanges run about 25 times as fast as real
  // sign-ins make codes on this machine (both slow down together when it is busy), so 10 s
  // take about 260 s of seeding. Each level gets its own batch, so no code outlives its
  // 300 s handoff lifetime before it is redeemed. The seeding time is the bound: on a fast
  // day 60,000 codes were made in 151 s and redeemed in 6 s (10k exchanges a second), so the
  // count only guards against a machine far faster than this one.
  seedSeconds: 290,
  seedMaxCodes: 250_000,
  introspectSessions: 300,
  memorySessions: 100_000,
};

const QUICK: Profile = {
  warmupSeconds: 0.3,
  signInWarmupSeconds: 0.3,
  measureSeconds: 1,
  overloadSeconds: 1,
  connections: [50, 100],
  costlyConnections: [5, 10],
  accounts: 20,
  seedWorkers: 16,
  seedSeconds: 20,
  seedMaxCodes: 100,
  introspectSessions: 40,
  memorySessions: 1_000,
};

export type BenchReport = {
  machine: Machine;
  startedAt: string;
  finishedAt?: string;
  mode: 'full' | 'quick';
  settings: Record<string, unknown>;
  results: ResultRow[];
  seeding?: Record<string, unknown>;
  signIn?: Record<string, unknown>;
  memory?: Record<string, unknown>;
  targets?: TargetCheck[];
  notes: string[];
};

/**
 * S5's offered rates, as multiples of S1's capacity, measured again right before S5 at the
 * connections of S1's best level: 80% first, within capacity, the reference for RSS (the same
 * clients, connections and generator; only the load differs); the issue's 120%, judged
 * against the targets; and 200%, showing the same behaviour further beyond capacity.
 */
const OVERLOAD_FACTORS = [0.8, 1.2, 2];
const OVERLOAD_JUDGED = 1.2;
/**
 * S5's clients: a pool of kept-alive connections, each used once before the clock starts, that
 * does not grow (a request finding none idle waits for one, and that wait counts in its
 * latency from the schedule). Nearly four times the 100 requests the gateway admits at once
 * (three times the 128 it admitted until the fifth session): at 120% the requests in flight
 * are about 200 (rate x latency), at 200% the pool runs out, which the 200% row shows.
 * Opening connections while the server is saturated would measure how late Node accepts
 * them (a first request on a new connection waited up to seconds), and grow the pool towards
 * its limit.
 */
const OVERLOAD_CONNECTIONS = 384;

const PLATFORM_KEY = 'BENCH';
const RETURN_URL = 'http://localhost:3000/';
const CALLBACK_URL = 'http://localhost:3000/cb';

/** `pnpm bench`: measures what issue 8 asks for and writes the report. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const profile = {
    ...(options.quick ? QUICK : FULL),
    ...(options.seedSeconds === undefined ? {} : { seedSeconds: options.seedSeconds }),
  };
  const wanted = (name: ScenarioName) => options.only === undefined || options.only.includes(name);
  const out = resolve(repoRoot, options.out);
  const logDir = join(dirname(out), 'logs');
  await mkdir(logDir, { recursive: true });
  const report: BenchReport = {
    machine: describeMachine(),
    startedAt: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    settings: {
      ...profile,
      loadGenerator:
        'autocannon (library) in the bench process; every server under test in a process of its own',
      keepAlive: true,
      pipelining: 1,
      gatewayLogLevel: options.logLevel ?? 'info',
      rateLimits: 'RATE_LIMIT_* = 0 (off): the figures are capacity, not configured limits',
    },
    results: [],
    notes: [],
  };
  const started: BenchProcess[] = [];
  // CLOCK_MONOTONIC, the clock of V8's CPU profiles: lets a profile be cut to a measured run.
  const profileWindows: { name: string; connections: number; startUs: number; endUs: number }[] =
    [];
  const begin = Date.now();
  const elapsed = () => `${((Date.now() - begin) / 1000).toFixed(0)}s`;
  const step = (line: string) => log(`[bench ${elapsed()}] ${line}`);

  const start = async (
    name: string,
    entry: string,
    env: NodeJS.ProcessEnv,
    args: string[] = [],
    nodeArgs: string[] = [],
    imports: string[] = [],
  ) => {
    const child = startTsxProcess({
      name,
      entry,
      args,
      env: baseEnv(env),
      logDir,
      nodeArgs,
      imports,
    });
    started.push(child);
    return child;
  };
  // --alloc-prof: the process whose measured levels get an allocation profile each.
  const allocDir = join(dirname(out), 'alloc-prof');
  let allocTarget: BenchProcess | undefined;
  const allocationProfiles: { name: string; connections: number; file: string }[] = [];
  /**
   * Runs one measured level: its time window goes into the report (for --cpu-prof), and
   * with --alloc-prof, when `pids` include the sampled process, it gets a profile of its own.
   */
  const measuredLevel = async <T>(
    pids: number[],
    name: string,
    connections: number,
    level: () => Promise<T>,
  ): Promise<T> => {
    const target =
      allocTarget !== undefined && pids.includes(allocTarget.pid) ? allocTarget : undefined;
    const survivorsOnly = options.allocSurvivors === true;
    const file = join(
      allocDir,
      `${name}-${connections}${survivorsOnly ? '.survivors' : ''}.heapprofile`,
    );
    if (target !== undefined) {
      await allocationCommand(target, { allocationProfile: 'start', survivorsOnly }, 'started');
    }
    const startUs = monotonicUs();
    const result = await level();
    profileWindows.push({ name, connections, startUs, endUs: monotonicUs() });
    if (target !== undefined) {
      await allocationCommand(target, { allocationProfile: 'stop', file }, 'written');
      allocationProfiles.push({ name, connections, file });
    }
    return result;
  };
  const stop = async (child: BenchProcess) => {
    await child.stop();
    started.splice(started.indexOf(child), 1);
  };

  /** Warm-up (not recorded), then one measured run per connection count. */
  const measure = async (spec: {
    name: ScenarioName;
    url: string;
    requests: LoadRequest[];
    expectedStatuses: number[];
    serverPids: number[];
    /** Samples this process's RSS during each measured run (highest and median in the row). */
    rssPid?: number;
    pgTransactions?: () => Promise<number>;
    extra?: (connections: number, result: LoadResult) => Record<string, unknown>;
  }) => {
    step(
      `${spec.name}: warm-up ${profile.warmupSeconds}s, then ${profile.measureSeconds}s per level`,
    );
    await runLoad({
      url: spec.url,
      connections: profile.connections[0] ?? 50,
      durationSeconds: profile.warmupSeconds,
      requests: spec.requests,
      expectedStatuses: spec.expectedStatuses,
    });
    for (const connections of profile.connections) {
      const usage = await cpuSnapshot(spec.serverPids, spec.pgTransactions);
      const rss = spec.rssPid === undefined ? undefined : sampleRss(spec.rssPid);
      const result = await measuredLevel(spec.serverPids, spec.name, connections, () =>
        runLoad({
          url: spec.url,
          connections,
          durationSeconds: profile.measureSeconds,
          requests: spec.requests,
          expectedStatuses: spec.expectedStatuses,
        }),
      );
      const cpu = await usage.done(result);
      const rssStats = await rss?.stop();
      addRow(spec.name, connections, result, {
        ...cpu,
        ...(rssStats === undefined
          ? {}
          : { rssMaxBytes: rssStats.maxBytes, rssMedianBytes: rssStats.medianBytes }),
        ...spec.extra?.(connections, result),
      });
    }
  };
  const addRow = (
    name: string,
    connections: number,
    result: LoadResult,
    extra: Record<string, unknown> = {},
  ) => {
    const row: ResultRow = {
      name,
      connections,
      rps: round2(result.rps),
      p50Ms: round2(result.p50Ms),
      p99Ms: round2(result.p99Ms),
      errors: result.errors,
      requests: result.requests,
      durationSeconds: result.durationSeconds,
      statusCounts: result.statusCounts,
      ...extra,
    };
    report.results.push(row);
    step(
      `  ${name} @${connections}: ${row.rps.toFixed(0)} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, errors ${row.errors} ${JSON.stringify(row.statusCounts)}`,
    );
    return row;
  };

  let testDb: TestDatabase | undefined;
  let testRedis: TestRedis | undefined;
  let redis: Redis | undefined;
  let rawRedis: Redis | undefined;
  let statsClient: pg.Client | undefined;
  // Whatever happens (an error, Ctrl-C), the processes stop and the database and the Redis
  // keys of the run go away.
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      for (const child of [...started].reverse()) await child.stop().catch(() => undefined);
      redis?.disconnect();
      rawRedis?.disconnect();
      await statsClient?.end().catch(() => undefined);
      await testRedis?.cleanup().catch(() => undefined);
      await testDb?.drop().catch(() => undefined);
    })();
    return cleaning;
  };
  const interrupted = () => {
    step('interrupted: stopping the processes, dropping the database and the Redis keys');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    [testDb, testRedis] = await Promise.all([createTestDatabase(), createTestRedis()]);
    const db = testDb;
    const redisInfo = testRedis;
    redis = new Redis(redisInfo.url, { keyPrefix: redisInfo.keyPrefix });
    const bench = redis;
    // MEMORY USAGE, INFO and SCAN take full key names: a connection without the prefix.
    rawRedis = new Redis(redisInfo.url);
    const raw = rawRedis;
    report.machine.redis = /redis_version:(\S+)/.exec(await bench.info('server'))?.[1];
    report.machine.postgres = await withPg(db.url, async (client) => {
      const { rows } = await client.query<{ version: string }>(
        "select current_setting('server_version') as version",
      );
      return rows[0]?.version;
    });
    statsClient = new pg.Client({ connectionString: db.url });
    await statsClient.connect();
    const stats = statsClient;
    const pgTransactions = async () => {
      const { rows } = await stats.query<{ n: string }>(
        'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
      );
      return Number(rows[0]?.n ?? 0);
    };
    const dataEnv = {
      DATABASE_URL: db.url,
      REDIS_URL: redisInfo.url,
      REDIS_KEY_PREFIX: redisInfo.keyPrefix,
    };

    // --- Baselines (a)-(d) ------------------------------------------------------------------
    const baselines: [ScenarioName, string][] = [
      ['baseline-node-http', 'node-http'],
      ['baseline-express', 'express'],
      ['baseline-express-redis-get', 'express-redis-get'],
      ['baseline-express-pg-select', 'express-pg-select'],
    ];
    for (const [name, kind] of baselines) {
      if (!wanted(name)) continue;
      if (kind === 'express-redis-get') {
        // About the size of a gateway session record.
        await bench.set('baseline:value', JSON.stringify({ padding: 'x'.repeat(400) }));
      }
      if (kind === 'express-pg-select') {
        await withPg(db.url, (client) =>
          client.query(
            `create table if not exists bench_baseline (id integer primary key, subject text not null, email text not null, status text not null);
             insert into bench_baseline select i, 'user-' || i, 'user-' || i || '@example.test', 'ACTIVE' from generate_series(1, 1000) i on conflict do nothing;
             analyze bench_baseline;`,
          ),
        );
      }
      const child = await start(name, 'scripts/bench/targets/baseline.ts', dataEnv, [kind]);
      const { port } = (await child.ready) as { port: number };
      await measure({
        name,
        url: `http://127.0.0.1:${port}`,
        requests: [{ method: 'GET', path: '/' }],
        expectedStatuses: [200],
        serverPids: [child.pid],
      });
      await stop(child);
    }

    // --- The peer: oidc-provider introspection ------------------------------------------------
    if (wanted('peer-oidc-provider-introspect')) {
      const child = await start(
        'peer-oidc-provider',
        'scripts/bench/targets/peer-oidc-provider.ts',
        dataEnv,
      );
      const peer = (await child.ready) as {
        origin: string;
        clientId: string;
        clientSecret: string;
        redirectUri: string;
      };
      const tokens: string[] = [];
      for (let index = 0; index < (options.quick ? 5 : 20); index += 1) {
        tokens.push(await peerAccessToken(peer, `user-${index + 1}`));
      }
      const authorization = basicAuthorization(peer.clientId, peer.clientSecret);
      const introspect = (token: string) =>
        fetch(`${peer.origin}/token/introspection`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        }).then((response) => response.json() as Promise<{ active?: boolean }>);
      if ((await introspect(tokens[0] ?? '')).active !== true) {
        throw new Error('the peer does not introspect its own token as active');
      }
      await measure({
        name: 'peer-oidc-provider-introspect',
        url: peer.origin,
        requests: tokens.map((token) => ({
          method: 'POST',
          path: '/token/introspection',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        })),
        expectedStatuses: [200],
        serverPids: [child.pid],
      });
      await stop(child);
    }

    // --- The gateway, all-in-one on PostgreSQL + Redis -------------------------------------
    const gatewayScenarios: ScenarioName[] = [
      'introspect-allinone',
      'introspect-split',
      'exchange',
      'start',
      'signin',
      'overload',
      'memory',
    ];
    if (gatewayScenarios.some(wanted)) {
      const identity = await start(
        'identity-provider',
        'scripts/bench/targets/identity-provider.ts',
        {
          BENCH_ACCOUNTS: String(profile.accounts),
        },
      );
      const idp = (await identity.ready) as {
        issuer: string;
        origin: string;
        audience: string;
        clients: TestClient[];
      };
      const gatewayClient = idp.clients.find((client) => client.clientId === 'test-gateway');
      const machineClient = idp.clients.find((client) => client.clientId === 'test-machine');
      if (gatewayClient === undefined || machineClient === undefined) {
        throw new Error('the identity provider has no gateway or machine client');
      }
      const gatewayEnv = {
        ...dataEnv,
        NODE_ENV: 'production',
        LOG_LEVEL: options.logLevel ?? 'info',
        IDENTITY_ISSUER: idp.issuer,
        IDENTITY_OIDC_CLIENT_ID: gatewayClient.clientId,
        IDENTITY_OIDC_CLIENT_SECRET: gatewayClient.clientSecret,
        IDENTITY_ACCESS_TOKEN_AUDIENCE: idp.audience,
        IDENTITY_DEPLOYMENT_TIER: 'development',
        IDENTITY_ENVIRONMENT_SECRET_KEY: randomToken(),
        GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('bench'),
        // The provider's registered redirect URI; the bench carries the query to the gateway.
        AUTH_CALLBACK_URL: 'http://localhost:8080/v1/auth/callback',
        // Codes are produced ahead of S2 and redeemed up to a few minutes later.
        AUTH_HANDOFF_TTL_SECONDS: '300',
        RATE_LIMIT_BROWSER_PER_IP: '0',
        RATE_LIMIT_EXCHANGE_PER_CLIENT: '0',
        RATE_LIMIT_INTROSPECT_PER_CLIENT: '0',
        RATE_LIMIT_SERVER_PER_IP: '0',
      };
      const gatewayPort = await unusedLocalPort();
      const profDir = join(dirname(out), 'cpu-prof');
      if (options.cpuProf === true) await mkdir(profDir, { recursive: true });
      step('starting the all-in-one gateway (PostgreSQL + Redis)');
      if (options.allocProf === true) await mkdir(allocDir, { recursive: true });
      const gateway = await start(
        'gateway-allinone',
        'services/all-in-one/src/gateway-main.ts',
        { ...gatewayEnv, PORT: String(gatewayPort) },
        [],
        options.cpuProf === true ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
        options.allocProf === true ? ['./scripts/bench/allocation-sampling.ts'] : [],
      );
      if (options.allocProf === true) allocTarget = gateway;
      const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
      await waitUntilReady(gatewayUrl, gateway);
      const rssAtStart = await rssBytes(gateway.pid);

      // Platform, BFF key and backend key through the admin API.
      const adminToken = await machineToken(idp, machineClient);
      const admin = (path: string, body: unknown) =>
        fetch(`${gatewayUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(async (response) => {
          const json = (await response.json()) as {
            credentials?: { kind: string; clientId: string; clientSecret: string }[];
          };
          if (response.status !== 201) {
            throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
          }
          return json.credentials ?? [];
        });
      const [bff] = await admin('/v1/platforms', {
        platformKey: PLATFORM_KEY,
        displayName: 'Bench',
        redirectPairs: [
          { label: 'web', returnUrl: RETURN_URL, callbackUrl: CALLBACK_URL, isDefault: true },
        ],
      });
      const [backend] = await admin(`/v1/platforms/${PLATFORM_KEY}/credentials`, {
        kind: 'backend',
      });
      if (bff === undefined || backend === undefined) throw new Error('no platform keys issued');
      const bffAuthorization = basicAuthorization(bff.clientId, bff.clientSecret);
      const backendAuthorization = basicAuthorization(backend.clientId, backend.clientSecret);
      const target: LoginTarget = {
        gatewayUrl,
        providerOrigin: idp.origin,
        platformKey: PLATFORM_KEY,
        returnTo: '/',
        bffAuthorization,
      };

      // One real sign-in end to end, so a broken flow fails here with its reason.
      const first = await signIn(target, providerBrowser(idp.origin), 'user-1');
      const firstExchange = await exchange(target, first.code);
      if (firstExchange.status !== 200 || firstExchange.gatewayToken !== first.sessionToken) {
        throw new Error(`the first exchange answered ${firstExchange.status}`);
      }

      // Seeding: sessions (S1) and fresh handoff codes (S2) through real sign-ins.
      const needsCodes = wanted('exchange');
      const pool: SignedIn[] = [];
      const minimum = profile.introspectSessions;
      step(
        needsCodes
          ? `seeding handoff codes and sessions through real sign-ins (up to ${profile.seedSeconds}s or ${profile.seedMaxCodes} codes for S2's first level)`
          : `seeding ${minimum} sessions through real sign-ins`,
      );
      const gatewayCpuBefore = await cpuMs(gateway.pid);
      const idpCpuBefore = await cpuMs(identity.pid);
      const seedStartUs = monotonicUs();
      const seeded = await seedSignIns({
        target,
        workers: profile.seedWorkers,
        accounts: profile.accounts,
        deadline: Date.now() + profile.seedSeconds * 1000,
        enough: (count) => count >= (needsCodes ? profile.seedMaxCodes : minimum),
        onSignedIn: (signedIn) => pool.push(signedIn),
      });
      profileWindows.push({
        name: 'seeding',
        connections: profile.seedWorkers,
        startUs: seedStartUs,
        endUs: monotonicUs(),
      });
      const seedGatewayCpu = (await cpuMs(gateway.pid)) - gatewayCpuBefore;
      const idpCpu = (await cpuMs(identity.pid)) - idpCpuBefore;
      report.seeding = {
        signIns: seeded.count,
        failures: seeded.failures,
        ...(seeded.firstError === undefined ? {} : { firstError: seeded.firstError }),
        seconds: round2(seeded.seconds),
        signInsPerSecond: round2(seeded.count / seeded.seconds),
        concurrentBrowsers: profile.seedWorkers,
        returningBrowsers: true,
        gatewayCpuMsPerSignIn: round2(seedGatewayCpu / seeded.count),
        identityCpuMsPerSignIn: round2(idpCpu / seeded.count),
      };
      step(
        `  seeded ${seeded.count} sign-ins in ${seeded.seconds.toFixed(1)}s (${seeded.failures} failures)`,
      );
      if (pool.length < minimum) {
        throw new Error(`only ${pool.length} sign-ins were seeded (${seeded.firstError ?? ''})`);
      }
      const sessions = pool.slice(0, minimum).map((signedIn) => signedIn.sessionToken);

      // --- S2 exchange: every request redeems a fresh code --------------------------------
      if (wanted('exchange')) {
        let codes = pool.map((signedIn) => signedIn.code);
        let cursor = 0;
        const exchangeRequest: LoadRequest = {
          method: 'POST',
          path: '/v1/auth/exchange',
          headers: { authorization: bffAuthorization, 'content-type': 'application/json' },
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ code: codes[cursor++] ?? 'handoff_pool_exhausted' }),
          }),
        };
        const batches: Record<string, unknown>[] = [];
        for (const [index, connections] of profile.costlyConnections.entries()) {
          if (index > 0) {
            // A fresh batch per level: the first level spent its codes (and the first batch's
            // oldest ones would not outlive a second seeding).
            step(`exchange @${connections}: seeding a fresh batch of handoff codes`);
            const batch: SignedIn[] = [];
            const seededAgain = await seedSignIns({
              target,
              workers: profile.seedWorkers,
              accounts: profile.accounts,
              deadline: Date.now() + profile.seedSeconds * 1000,
              enough: (count) => count >= profile.seedMaxCodes,
              onSignedIn: (signedIn) => batch.push(signedIn),
            });
            batches.push({
              connections,
              signIns: seededAgain.count,
              failures: seededAgain.failures,
              seconds: round2(seededAgain.seconds),
            });
            codes = batch.map((signedIn) => signedIn.code);
            cursor = 0;
          }
          // Codes are redeemed oldest first and far faster than they were made, so none is
          // older than the seeding time when redeemed (290 s of the 300 s lifetime). The path
          // is warm after a few hundred exchanges; every other code is measured.
          const warmup = index === 0 ? Math.min(Math.floor(codes.length * 0.1), 500) : 0;
          // Leave one code per connection unused: autocannon builds each connection's next
          // request before it knows the run is over.
          const amount = codes.length - warmup - connections;
          step(
            `exchange @${connections}: ${codes.length} fresh codes, ${warmup} for warm-up, ${Math.max(amount, 0)} measured`,
          );
          if (warmup >= connections * 2) {
            await runLoad({
              url: gatewayUrl,
              connections,
              amount: warmup,
              requests: [exchangeRequest],
              expectedStatuses: [200],
            });
          }
          cursor = warmup;
          if (amount < connections) {
            report.notes.push(
              `exchange @${connections}: too few codes (${codes.length}) to measure`,
            );
            continue;
          }
          const usage = await cpuSnapshot([gateway.pid], pgTransactions);
          const result = await measuredLevel([gateway.pid], 'exchange', connections, () =>
            runLoad({
              url: gatewayUrl,
              connections,
              amount,
              requests: [exchangeRequest],
              expectedStatuses: [200],
            }),
          );
          addRow('exchange', connections, result, {
            ...(await usage.done(result)),
            freshCodes: amount,
          });
        }
        if (batches.length > 0) report.seeding = { ...report.seeding, laterBatches: batches };
      }

      // --- S1 introspect: active and inactive tokens, BFF and backend keys -------------------
      const introspectRequests = (): LoadRequest[] => {
        const requests: LoadRequest[] = [];
        const request = (authorization: string, token: string): LoadRequest => ({
          method: 'POST',
          path: '/v1/auth/introspect',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
        });
        sessions.forEach((token, index) => {
          requests.push(request(bffAuthorization, token), request(backendAuthorization, token));
          // One unknown token for every two live ones: 80% active, 20% inactive.
          if (index % 2 === 0) {
            requests.push(
              request(index % 4 === 0 ? bffAuthorization : backendAuthorization, randomToken()),
            );
          }
        });
        return requests;
      };
      const checkIntrospection = async (url: string) => {
        const ask = async (token: string, authorization: string) => {
          const response = await fetch(`${url}/v1/auth/introspect`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ token }),
          });
          return ((await response.json()) as { active?: boolean }).active;
        };
        if (
          (await ask(sessions[0] ?? '', backendAuthorization)) !== true ||
          (await ask(sessions[0] ?? '', bffAuthorization)) !== true ||
          (await ask(randomToken(), bffAuthorization)) !== false
        ) {
          throw new Error(`introspection at ${url} does not answer as expected`);
        }
      };
      if (wanted('introspect-allinone') || wanted('overload')) {
        await checkIntrospection(gatewayUrl);
        await measure({
          name: 'introspect-allinone',
          url: gatewayUrl,
          requests: introspectRequests(),
          expectedStatuses: [200],
          serverPids: [gateway.pid],
          rssPid: gateway.pid,
          pgTransactions,
        });
      }

      // --- S3 start: 302 to authorize ------------------------------------------------------
      if (wanted('start')) {
        await measure({
          name: 'start',
          url: gatewayUrl,
          requests: [
            {
              method: 'GET',
              path: `/v1/auth/start?platformKey=${PLATFORM_KEY}&returnTo=${encodeURIComponent('/')}`,
            },
          ],
          expectedStatuses: [302],
          serverPids: [gateway.pid],
          pgTransactions,
        });
      }

      // --- S4 whole sign-ins: fresh browsers, start → identity → callback → exchange --------
      if (wanted('signin')) {
        step(
          `signin: fresh browsers, warm-up ${profile.signInWarmupSeconds}s, then ${profile.measureSeconds}s per level`,
        );
        let accountTurn = 0;
        const wholeSignIn = async () => {
          accountTurn += 1;
          const signedIn = await signIn(
            target,
            providerBrowser(idp.origin),
            `user-${(accountTurn % profile.accounts) + 1}`,
          );
          const answer = await exchange(target, signedIn.code);
          if (answer.status !== 200) throw new Error(`exchange answered ${answer.status}`);
        };
        await closedLoop(
          profile.costlyConnections[0] ?? 50,
          profile.signInWarmupSeconds,
          wholeSignIn,
        );
        const details: Record<string, unknown>[] = [];
        for (const connections of profile.costlyConnections) {
          const usage = await cpuSnapshot([gateway.pid], pgTransactions);
          const identityBefore = await cpuMs(identity.pid);
          const run = await measuredLevel([gateway.pid], 'signin', connections, () =>
            closedLoop(connections, profile.measureSeconds, wholeSignIn),
          );
          const identityCpu = (await cpuMs(identity.pid)) - identityBefore;
          // A request of this scenario is a whole sign-in (the bench is its browsers).
          const cpu = await usage.done({ durationSeconds: run.seconds, requests: run.completed });
          const extra = {
            ...cpu,
            gatewayCpuMsPerSignIn: cpu.serverCpuMsPerRequest,
            gatewaySystemCpuMsPerSignIn: cpu.serverSystemCpuMsPerRequest,
            identityCpuMsPerSignIn: round2(identityCpu / Math.max(run.completed, 1)),
          };
          details.push({ connections, ...extra, firstError: run.firstError });
          addRow(
            'signin',
            connections,
            {
              rps: run.completed / run.seconds,
              p50Ms: percentile(run.latencies, 50),
              p99Ms: percentile(run.latencies, 99),
              errors: run.failed,
              requests: run.completed,
              durationSeconds: round2(run.seconds),
              statusCounts: {},
              socketErrors: 0,
              timeouts: 0,
            },
            extra,
          );
        }
        report.signIn = {
          what: 'start → identity provider (login + consent pages, fresh browser) → callback → exchange; rps = sign-ins per second',
          levels: details,
        };
      }

      // --- S5 overload: open-loop at 80%, 120% and 200% of S1's capacity, measured again ----
      if (wanted('overload')) {
        // S1's capacity, measured again right before S5 (docs/decisions.md, "S5's rates come
        // from a capacity measured right before it"): the same closed-loop load as S1's best
        // level, not recorded as an S1 row. S1 ran a minute or two earlier, and this
        // machine's speed swings by a quarter or more from one minute to the next: from a
        // fast minute's rate the 80% level was already beyond capacity (it refused 37% of
        // its requests).
        const s1Rows = report.results.filter((row) => row.name === 'introspect-allinone');
        const s1Best = s1Rows.reduce((best, row) => (row.rps > best.rps ? row : best));
        const recheckUsage = await cpuSnapshot([gateway.pid]);
        const recheck = await runLoad({
          url: gatewayUrl,
          connections: s1Best.connections,
          durationSeconds: profile.measureSeconds,
          requests: introspectRequests(),
          expectedStatuses: [200],
        });
        if (recheck.errors > 0) {
          throw new Error(`S5's capacity check had ${recheck.errors} errors`);
        }
        const capacity = recheck.rps;
        // Its CPU per request tells a fast minute from a slower S1 (S1's rows carry theirs).
        const recheckCpu = await recheckUsage.done(recheck);
        const capacityOf = {
          capacityRps: round2(capacity),
          capacityServerCpuPct: recheckCpu.serverCpuPct,
          capacityServerCpuMsPerRequest: recheckCpu.serverCpuMsPerRequest,
          s1BestRps: s1Best.rps,
          s1BestConnections: s1Best.connections,
        };
        step(
          `overload: capacity ${capacity.toFixed(0)} req/s @${s1Best.connections} now, server ${recheckCpu.serverCpuPct.toFixed(0)}% CPU (S1's best: ${s1Best.rps.toFixed(0)}); introspect offered open-loop at ${OVERLOAD_FACTORS.map((factor) => `${(capacity * factor).toFixed(0)} req/s (${Math.round(factor * 100)}%)`).join(', ')}`,
        );
        // Open-loop (scripts/bench/open-loop.ts): requests go out at the offered rate whatever
        // the answers do, as from many independent clients, so the excess really arrives. A
        // closed-loop generator with one request in flight per connection offers only what
        // is answered. Judged at 120%; 80% and 200% are shown beside it. The latency at 120%
        // compares with the 80% level's (checkTargets); S1's at its full load (its highest
        // connection count) is shown beside it.
        const base = Math.max(...profile.connections);
        let withinCapacityRss: number | undefined;
        for (const factor of OVERLOAD_FACTORS) {
          const offeredRps = capacity * factor;
          const sampler = sampleRss(gateway.pid);
          const usage = await cpuSnapshot([gateway.pid], pgTransactions);
          const run = await runOpenLoopInWorker({
            url: gatewayUrl,
            ratePerSecond: offeredRps,
            durationSeconds: profile.overloadSeconds,
            requests: introspectRequests(),
            connections: OVERLOAD_CONNECTIONS,
            timeoutMs: 10_000,
            expectedStatuses: [200, 429, 503],
          });
          const rss = await sampler.stop();
          // Growth beyond capacity: the median RSS (its level, not one sample taken just
          // before a collection) against the median at 80%, the same process with the same
          // clients within capacity. Against S1 the comparison mixed in the S1 levels' own
          // swings with V8's heap sizing (10-30% between its two levels).
          if (factor < 1) withinCapacityRss = rss.medianBytes;
          const reference = factor < 1 ? undefined : withinCapacityRss;
          const result: LoadResult = {
            rps: run.rps,
            p50Ms: run.p50Ms,
            p99Ms: run.p99Ms,
            errors: run.errors,
            requests: run.answered,
            durationSeconds: run.durationSeconds,
            statusCounts: run.statusCounts,
            socketErrors: run.socketErrors,
            timeouts: run.timeouts,
          };
          addRow('overload', OVERLOAD_CONNECTIONS, result, {
            ...(await usage.done(result)),
            offeredPct: Math.round(factor * 100),
            offeredRps: round2(offeredRps),
            ...capacityOf,
            offeredRequests: run.offered,
            sentRequests: run.sent,
            p99FromScheduleMs: run.p99FromScheduleMs,
            latencyByStatus: run.latencyByStatus,
            backlogMax: run.backlogMax,
            generatorStallMaxMs: run.generatorStallMaxMs,
            benchThreadStallMaxMs: run.benchThreadStallMaxMs,
            connectionsReplaced: run.connectionsReplaced,
            refusalBodies: run.bodies,
            comparedWithConnections: base,
            judged: factor === OVERLOAD_JUDGED,
            rssMedianBytes: rss.medianBytes,
            rssMaxBytes: rss.maxBytes,
            ...(reference === undefined
              ? {}
              : {
                  rssReferenceBytes: reference,
                  rssGrowthPct: round2(((rss.medianBytes - reference) / reference) * 100),
                }),
          });
        }
      }

      // --- S6 memory: Redis bytes per live session, gateway RSS after many sessions ----------
      if (wanted('memory')) {
        report.memory = await measureMemory({
          bench,
          raw,
          prefix: redisInfo.keyPrefix,
          knownSessions: pool.map((signedIn) => signedIn.sessionToken),
          target: profile.memorySessions,
          gatewayPid: gateway.pid,
          rssAtStart,
          // Distinct sessions, each at most once, for as long as S1 measures one level (or
          // until every session was asked for).
          introspectMany: async (tokens) => {
            let next = 0;
            const result = await runLoad({
              url: gatewayUrl,
              connections: 50,
              durationSeconds: profile.measureSeconds * 2,
              requests: [
                {
                  method: 'POST',
                  path: '/v1/auth/introspect',
                  headers: {
                    authorization: backendAuthorization,
                    'content-type': 'application/json',
                  },
                  setupRequest: (request) => ({
                    ...request,
                    body: JSON.stringify({ token: tokens[next++ % tokens.length] }),
                  }),
                },
              ],
              expectedStatuses: [200],
            });
            return result;
          },
          step,
        });
      }

      report.settings.gatewayRssAtStartBytes = rssAtStart;
      report.settings.gatewayRssAtEndBytes = await rssBytes(gateway.pid);
      step('stopping the all-in-one gateway');
      await stop(gateway);

      // --- S1 again, split mode: four processes, Connect over HTTP/2 -------------------------
      if (wanted('introspect-split')) {
        step('starting the split deployment (edge, registry, auth-flow, onboarding)');
        const ports = {
          edge: await unusedLocalPort(),
          registry: await unusedLocalPort(),
          authFlow: await unusedLocalPort(),
          onboarding: await unusedLocalPort(),
        };
        const internal = (port: number) => `http://127.0.0.1:${port}`;
        const splitEnv = {
          ...gatewayEnv,
          REGISTRY_SERVICE_URL: internal(ports.registry),
          AUTH_FLOW_SERVICE_URL: internal(ports.authFlow),
          ONBOARDING_SERVICE_URL: internal(ports.onboarding),
        };
        const services = [
          await start('split-registry', 'services/registry/src/main.ts', {
            ...splitEnv,
            PORT: String(ports.registry),
          }),
          await start(
            'split-auth-flow',
            'services/auth-flow/src/main.ts',
            { ...splitEnv, PORT: String(ports.authFlow) },
            [],
            options.cpuProf === true ? ['--cpu-prof', `--cpu-prof-dir=${profDir}/auth-flow`] : [],
          ),
          await start('split-onboarding', 'services/onboarding/src/main.ts', {
            ...splitEnv,
            PORT: String(ports.onboarding),
          }),
          await start(
            'split-edge',
            'services/edge/src/main.ts',
            { ...splitEnv, PORT: String(ports.edge) },
            [],
            options.cpuProf === true ? ['--cpu-prof', `--cpu-prof-dir=${profDir}/edge`] : [],
          ),
        ];
        const edgeUrl = internal(ports.edge);
        await waitUntilReady(edgeUrl, services[3] as BenchProcess, services);
        await checkIntrospection(edgeUrl);
        await measure({
          name: 'introspect-split',
          url: edgeUrl,
          requests: introspectRequests(),
          expectedStatuses: [200],
          serverPids: services.map((service) => service.pid),
          pgTransactions,
        });
        for (const service of services) await stop(service);
      }
      await stop(identity);
    }
  } finally {
    await cleanup();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }

  if (options.cpuProf === true) report.settings.cpuProfileWindows = profileWindows;
  if (options.allocProf === true) report.settings.allocationProfiles = allocationProfiles;
  addRatios(report.results);
  report.targets = checkTargets(report);
  report.machine.loadAverageAtEnd = loadavg().map(round2);
  report.finishedAt = new Date().toISOString();
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  log('');
  log(formatTable(report.results));
  if (report.signIn !== undefined) log(`\nsign-in: ${JSON.stringify(report.signIn.levels)}`);
  if (report.memory !== undefined) log(`memory: ${JSON.stringify(report.memory)}`);
  log(`\ntargets of issue 8:\n${formatTargets(report.targets)}`);
  for (const note of report.notes) log(`note: ${note}`);
  log(`\nwritten to ${out} (${elapsed()})`);
  return report;
}

// --- helpers ---------------------------------------------------------------------------------

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Only what the processes need: no stray configuration from the caller's environment. */
function baseEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
  const base: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) base[name] = process.env[name];
  return { ...base, ...env };
}

async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function waitUntilReady(url: string, child: BenchProcess, all: BenchProcess[] = [child]) {
  await waitFor(
    async () => {
      for (const each of all) {
        if (each.child.exitCode !== null) {
          throw new Error(`${each.name} exited:\n${logTail(each.logFile)}`);
        }
      }
      return (await fetch(`${url}/health/ready`).catch(() => undefined))?.status === 200;
    },
    { timeoutMs: 120_000, intervalMs: 200, what: `${child.name} to answer ready` },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${all.map((each) => logTail(each.logFile)).join('\n')}`);
  });
}

/** CPU of the server processes and of the bench itself over one run. */
/**
 * CPU of the server processes and of the bench itself over one run, and (for the gateway) the
 * PostgreSQL transactions its database saw, from pg_stat_database: approximate, since
 * backends report their counters about once a second.
 */
async function cpuSnapshot(pids: number[], pgTransactions?: () => Promise<number>) {
  const serverBefore = await totalCpuSplitMs(pids);
  const benchBefore = process.cpuUsage();
  const pgBefore = await pgTransactions?.();
  const machineBefore = await machineTicks();
  return {
    done: async (result: { durationSeconds: number; requests: number }) => {
      const machine = machineShare(machineBefore, await machineTicks());
      const serverAfter = await totalCpuSplitMs(pids);
      const serverSystem = serverAfter.system - serverBefore.system;
      const server = serverAfter.user - serverBefore.user + serverSystem;
      const bench = process.cpuUsage(benchBefore);
      const benchMs = (bench.user + bench.system) / 1000;
      const pgAfter = await pgTransactions?.();
      const wallMs = Math.max(result.durationSeconds, 0.001) * 1000;
      const perRequest = (value: number) => round2(value / Math.max(result.requests, 1));
      return {
        serverCpuPct: round2((server / wallMs) * 100),
        serverCpuMsPerRequest: perRequest(server),
        // The part spent in the kernel: system calls, and on loopback the receiving side's
        // TCP work, which Linux charges to the sender.
        serverSystemCpuMsPerRequest: perRequest(serverSystem),
        loadGeneratorCpuPct: round2((benchMs / wallMs) * 100),
        loadGeneratorCpuMsPerRequest: perRequest(benchMs),
        ...machine,
        ...(pgBefore === undefined || pgAfter === undefined
          ? {}
          : { pgTransactionsPerRequest: perRequest(pgAfter - pgBefore) }),
      };
    },
  };
}

/** `workers` loops calling `work` for `seconds`; latency of each completed call. */
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
  return {
    completed: latencies.length,
    failed,
    firstError,
    latencies,
    seconds: (performance.now() - startedAt) / 1000,
  };
}

function shuffled<T>(values: T[]): T[] {
  for (let index = values.length - 1; index > 0; index -= 1) {
    const other = Math.floor(Math.random() * (index + 1));
    [values[index], values[other]] = [values[other] as T, values[index] as T];
  }
  return values;
}

/** A real client_credentials grant for the admin API. */
async function machineToken(
  idp: { issuer: string; audience: string },
  client: TestClient,
): Promise<string> {
  const response = await fetch(`${idp.issuer}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(client.clientId, client.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: idp.audience,
      scope: 'platforms:admin',
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`no machine token: ${response.status}`);
  return body.access_token;
}

/** An opaque access token of the peer through its authorization code flow (PKCE). */
async function peerAccessToken(
  peer: { origin: string; clientId: string; clientSecret: string; redirectUri: string },
  accountId: string,
): Promise<string> {
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

/** Redis bytes per live session and the gateway's RSS once many sessions exist and are used. */
async function measureMemory(options: {
  bench: Redis;
  raw: Redis;
  prefix: string;
  knownSessions: string[];
  target: number;
  gatewayPid: number;
  rssAtStart: number;
  introspectMany: (tokens: string[]) => Promise<LoadResult>;
  step: (line: string) => void;
}): Promise<Record<string, unknown>> {
  const { bench, raw, prefix, step } = options;
  const usage = async () => {
    const sessionKeys = await scanKeys(raw, `${prefix}s:*`);
    const userKeys = await scanKeys(raw, `${prefix}us:*`);
    const sample = sessionKeys.slice(0, 2_000);
    const sessionBytes = await sumMemoryUsage(raw, sample);
    const userBytes = await sumMemoryUsage(raw, userKeys);
    return {
      sessions: sessionKeys.length,
      users: userKeys.length,
      sessionKeyBytes: sample.length === 0 ? 0 : sessionBytes / sample.length,
      userIndexBytesPerSession: sessionKeys.length === 0 ? 0 : userBytes / sessionKeys.length,
    };
  };
  const real = await usage();
  const [sampleKey] = await scanKeys(raw, `${prefix}s:*`);
  const sampleValueBytes = sampleKey === undefined ? 0 : await raw.strlen(sampleKey);
  step(
    `memory: ${real.sessions} sessions from real sign-ins: ${real.sessionKeyBytes.toFixed(0)} B per s: key + ${real.userIndexBytesPerSession.toFixed(0)} B of us: index each`,
  );

  // More sessions: copies of real ones (same users, same fields, fresh ids and tokens) written
  // through the auth-flow store's own createSession script, as the callback writes them.
  const store = createRedisAuthFlowStore(bench);
  const now = Date.now();
  const templates = [];
  for (const token of options.knownSessions.slice(0, 200)) {
    const record = await store.getSession(hashToken(token), now);
    if (record !== undefined) templates.push(record);
  }
  if (templates.length === 0) throw new Error('no live session to copy');
  const toCreate = Math.max(0, options.target - real.sessions);
  const rssBeforeWrites = await rssBytes(options.gatewayPid);
  const memoryBefore = await usedMemory(raw);
  const tokens: string[] = [];
  step(`memory: writing ${toCreate} more sessions through the store`);
  for (let batch = 0; batch < toCreate; batch += 500) {
    const writes: Promise<void>[] = [];
    for (let index = batch; index < Math.min(toCreate, batch + 500); index += 1) {
      const template = templates[index % templates.length] as (typeof templates)[0];
      const token = randomToken();
      tokens.push(token);
      writes.push(
        store.createSession({
          ...template,
          id: randomUUID(),
          tokenHash: hashToken(token),
          createdAt: Date.now(),
        }),
      );
    }
    await Promise.all(writes);
  }
  await sleep(100);
  const memoryAfter = await usedMemory(raw);
  const all = await usage();
  const rssAfterWrites = await rssBytes(options.gatewayPid);
  step(`memory: introspecting distinct sessions among ${all.sessions}`);
  const pass = await options.introspectMany(shuffled([...options.knownSessions, ...tokens]));
  const rssAfter = await rssBytes(options.gatewayPid);
  const perSession = all.sessionKeyBytes + all.userIndexBytesPerSession;
  return {
    liveSessions: all.sessions,
    users: all.users,
    redisBytesPerSession: round2(perSession),
    redisSessionKeyBytes: round2(all.sessionKeyBytes),
    redisUserIndexBytesPerSession: round2(all.userIndexBytesPerSession),
    sessionValueBytes: sampleValueBytes,
    idTokenEncryptedBytes: templates[0]?.idTokenEncrypted?.length ?? 0,
    realSignInSessions: real.sessions,
    redisBytesPerRealSession: round2(real.sessionKeyBytes + real.userIndexBytesPerSession),
    infoUsedMemoryDeltaPerSession:
      toCreate === 0 ? null : round2((memoryAfter - memoryBefore) / toCreate),
    method:
      'MEMORY USAGE of the s:<tokenHash> keys (sample of up to 2000) plus the us:<userId> index sets spread over all sessions; INFO used_memory delta while copies were written (Redis is shared with other tests: indicative only)',
    introspectPass: {
      what: 'distinct live sessions introspected once each (a random sample when there are more than one pass can ask for)',
      requests: pass.requests,
      rps: round2(pass.rps),
      errors: pass.errors,
      statusCounts: pass.statusCounts,
    },
    gatewayRssAtStartBytes: options.rssAtStart,
    gatewayRssBeforeWritesBytes: rssBeforeWrites,
    gatewayRssAfterWritesBytes: rssAfterWrites,
    gatewayRssAfterPassBytes: rssAfter,
  };
}

/** Full key names matching `pattern` (on a connection without a key prefix). */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

async function sumMemoryUsage(redis: Redis, keys: string[]): Promise<number> {
  let total = 0;
  for (let index = 0; index < keys.length; index += 200) {
    const batch = keys.slice(index, index + 200);
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error === null && typeof value === 'number') total += value;
    }
  }
  return total;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

// --- the targets of issue 8 ---------------------------------------------------------------

export function checkTargets(report: BenchReport): TargetCheck[] {
  const rows = (name: string) => report.results.filter((row) => row.name === name);
  const at = (name: string, connections: number) =>
    report.results.find((row) => row.name === name && row.connections === connections);
  const checks: TargetCheck[] = [];
  const ratioCheck = (target: string, name: string, minimum: number) => {
    const measured = rows(name).filter((row) => row.ratioToBaseline !== undefined);
    if (measured.length === 0) return checks.push({ target, value: 'not measured', holds: null });
    const value = measured
      .map((row) => `${((row.ratioToBaseline ?? 0) * 100).toFixed(0)}% @${row.connections}`)
      .join(', ');
    return checks.push({
      target,
      value,
      holds: measured.every((row) => (row.ratioToBaseline ?? 0) >= minimum),
    });
  };
  ratioCheck('S1 introspect all-in-one >= 80% of baseline (c)', 'introspect-allinone', 0.8);
  ratioCheck('S1 introspect split >= 50% of baseline (c)', 'introspect-split', 0.5);
  {
    const pairs = rows('introspect-allinone').map((row) => ({
      row,
      baseline: at('baseline-express-redis-get', row.connections),
    }));
    const measured = pairs.filter((pair) => pair.baseline !== undefined);
    checks.push({
      target: 'S1 p99 <= 2x baseline (c) p99',
      value:
        measured
          .map(
            ({ row, baseline }) =>
              `${row.p99Ms} ms vs ${baseline?.p99Ms} ms (${(row.p99Ms / (baseline?.p99Ms || 1)).toFixed(1)}x) @${row.connections}`,
          )
          .join(', ') || 'not measured',
      holds:
        measured.length === 0
          ? null
          : measured.every(({ row, baseline }) => row.p99Ms <= 2 * (baseline?.p99Ms ?? 0)),
    });
    const peers = rows('introspect-allinone')
      .map((row) => ({ row, peer: at('peer-oidc-provider-introspect', row.connections) }))
      .filter((pair) => pair.peer !== undefined);
    checks.push({
      target: 'S1 >= 1.2x the oidc-provider peer',
      value:
        peers
          .map(({ row, peer }) => `${(row.rps / (peer?.rps || 1)).toFixed(2)}x @${row.connections}`)
          .join(', ') || 'not measured',
      holds:
        peers.length === 0
          ? null
          : peers.every(({ row, peer }) => row.rps >= 1.2 * (peer?.rps ?? 0)),
    });
  }
  ratioCheck('S2 exchange >= 60% of baseline (c)', 'exchange', 0.6);
  {
    const exchanges = rows('exchange');
    checks.push({
      target: 'S2 measures >= 10 s of steady load per level (fresh codes)',
      value:
        exchanges
          .map(
            (row) =>
              `${String(row.durationSeconds)} s (${String(row.freshCodes)} codes) @${row.connections}`,
          )
          .join(', ') || 'not measured',
      holds:
        exchanges.length === 0 ? null : exchanges.every((row) => Number(row.durationSeconds) >= 10),
    });
  }
  ratioCheck('S3 start >= 60% of baseline (c)', 'start', 0.6);
  {
    const signIns = rows('signin');
    // The limit is absolute. Beside it (shown only), two measures that move less with the
    // machine's speed: the same CPU in requests of baseline (c) at the same connection count
    // (7.4-15.8x in the eighth and ninth sessions' runs), and as a share of the identity
    // provider's (oidc-provider) CPU for the same sign-ins, measured in the same seconds
    // (0.44-0.60 over the same runs).
    const beside = (row: ResultRow) => {
      const parts: string[] = [];
      const baselineMs = at('baseline-express-redis-get', row.connections)?.serverCpuMsPerRequest;
      if (typeof baselineMs === 'number' && baselineMs > 0) {
        parts.push(
          `${(Number(row.gatewayCpuMsPerSignIn) / baselineMs).toFixed(1)}x (c)'s CPU per request`,
        );
      }
      const identityMs = row.identityCpuMsPerSignIn;
      if (typeof identityMs === 'number' && identityMs > 0) {
        parts.push(
          `${(Number(row.gatewayCpuMsPerSignIn) / identityMs).toFixed(2)}x the identity provider's`,
        );
      }
      return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
    };
    checks.push({
      target: 'S4 gateway CPU <= 2 ms per sign-in',
      value:
        signIns
          .map((row) => `${String(row.gatewayCpuMsPerSignIn)} ms${beside(row)} @${row.connections}`)
          .join(', ') || 'not measured',
      holds:
        signIns.length === 0
          ? null
          : signIns.every((row) => Number(row.gatewayCpuMsPerSignIn) <= 2),
    });
  }
  {
    const overload = rows('overload');
    // Judged at 120% of S1's capacity (measured right before S5); 80% and 200% are shown.
    const judged = overload.filter((row) => row.judged === true);
    const label = (row: ResultRow) =>
      `@${String(row.offeredPct)}%${row.judged === true ? '' : ' (shown)'}`;
    const refusalsCarryTheBody = (row: ResultRow) =>
      Object.values((row.refusalBodies ?? {}) as Record<string, string>).every((body) =>
        /"code":"(SERVICE_UNAVAILABLE|RATE_LIMITED)"/.test(body),
      );
    // Fast answers: every request offered was sent and answered (the excess refused at once
    // with 429/503 and the error body, or all of it served), no errors or time-outs, and the
    // latency within twice what the same clients see within capacity (the 80% level: same
    // process, connections and open-loop generator, only the load differs). The latency is
    // taken from when the schedule called for each request, so a wait for a free connection
    // counts too. Until the fifth session the reference was S1's closed-loop p99 at 100
    // connections; the open-loop clients' p99 exceeded twice that already at 80%, within
    // capacity (22-31 ms against 2 x 11-12 ms), so that comparison measured the generator,
    // not the overload. It is still shown.
    const withinCapacity = overload.find((row) => Number(row.offeredPct) < 100);
    const fast = judged.every((row) => {
      const refused = (row.statusCounts['429'] ?? 0) + (row.statusCounts['503'] ?? 0);
      const keptUp = row.rps >= 0.95 * Number(row.offeredRps);
      return (
        withinCapacity !== undefined &&
        (refused > 0 || keptUp) &&
        refusalsCarryTheBody(row) &&
        row.requests === Number(row.offeredRequests) &&
        Number(row.p99FromScheduleMs) <= 2 * Number(withinCapacity.p99FromScheduleMs) &&
        row.errors === 0
      );
    });
    const versusS1 = (row: ResultRow) => {
      const s1 = at('introspect-allinone', Number(row.comparedWithConnections));
      return s1 === undefined
        ? ''
        : `, ${(Number(row.p99FromScheduleMs) / s1.p99Ms).toFixed(1)}x S1's closed-loop p99 ${String(s1.p99Ms)} ms`;
    };
    checks.push({
      target:
        "S5 at 120% (open-loop): fast answers (the excess refused as 429/503 with the error body, no errors or time-outs, p99 from the schedule <= 2x the same clients' p99 at 80%)",
      value:
        (typeof withinCapacity?.capacityRps === 'number'
          ? `capacity ${withinCapacity.capacityRps.toFixed(0)} req/s right before S5 (S1's best ${String(withinCapacity.s1BestRps)}): `
          : '') +
          overload
            .map(
              (row) =>
                `${row.rps.toFixed(0)} of ${Number(row.offeredRps).toFixed(0)} req/s offered answered, p99 ${String(row.p99FromScheduleMs)} ms${row === withinCapacity ? '' : ` (${(Number(row.p99FromScheduleMs) / Number(withinCapacity?.p99FromScheduleMs ?? NaN)).toFixed(1)}x the 80% level's${versusS1(row)})`}, ${JSON.stringify(row.statusCounts)}, ${row.errors} errors ${label(row)}`,
            )
            .join('; ') || 'not measured',
      holds: judged.length === 0 ? null : fast,
    });
    checks.push({
      target: 'S5 RSS growth < +10% (median under overload, against the median at 80%)',
      value:
        overload
          .filter((row) => typeof row.rssGrowthPct === 'number')
          .map((row) => `${String(row.rssGrowthPct)}% ${label(row)}`)
          .join(', ') || 'not measured',
      holds: judged.length === 0 ? null : judged.every((row) => Number(row.rssGrowthPct) < 10),
    });
  }
  {
    const bytes = report.memory?.redisBytesPerSession;
    checks.push({
      target: 'S6 <= 1 KiB of Redis per live session',
      value: typeof bytes === 'number' ? `${bytes.toFixed(0)} B` : 'not measured',
      holds: typeof bytes === 'number' ? bytes <= 1024 : null,
    });
  }
  return checks;
}
