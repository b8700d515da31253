import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
} from '@gateway/testkit';
import { runLoad, type LoadRequest, type LoadResult } from './load.js';
import {
  figuresByProcess,
  repoRoot,
  sampleRss,
  startTsxProcess,
  usageOver,
  type BenchProcess,
} from './processes.js';
import {
  describeMachine,
  round2,
  type Machine,
  type ResultRow,
  type TargetCheck,
} from './report.js';

export const SCENARIOS = [
  'baseline-node-http',
  'baseline-express',
  'baseline-express-redis-get',
  'baseline-express-pg-select',
  'peer-oidc-provider-introspect',
  'introspect-allinone',
  'introspect-split',
  'exchange',
  'exchange-split',
  'start',
  'start-split',
  'signin',
  'signin-split',
  'overload',
  'memory',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** The split deployment's scenarios, each judged against the all-in-one one beside it. */
export const SPLIT_SCENARIOS = {
  'introspect-split': 'introspect-allinone',
  'exchange-split': 'exchange',
  'start-split': 'start',
  'signin-split': 'signin',
} as const satisfies Partial<Record<ScenarioName, ScenarioName>>;

/** main.ts's options (docs/benchmarks.md); `log` replaces stdout. */
export type BenchOptions = {
  quick: boolean;
  out: string;
  only?: ScenarioName[];
  seedSeconds?: number;
  logLevel?: string;
  cpuProf?: boolean;
  /**
   * The git ref of the build S4 is compared with (`none`: no comparison). Default: the
   * baseline commit in full runs, none in quick runs.
   */
  baselineRef?: string;
  /** An installed checkout to compare S4 with instead of checking one out. */
  baselineDir?: string;
  log?: (line: string) => void;
};

const FULL = {
  warmupSeconds: 3,
  /** A sign-in runs far more code than an introspection: V8 needs longer to compile it. */
  signInWarmupSeconds: 10,
  measureSeconds: 10,
  /** Each S5 level: RSS medians over 30 s are steady where 10 s catch V8's heap swings. */
  overloadSeconds: 30,
  /** S5's offered rates, as shares of the capacity measured right before it. */
  overloadFactors: [0.8, 1.2, 2],
  /** The least rate an S5 level offers, whatever the capacity measured (req/s). */
  overloadLeastRps: 0,
  connections: [50, 100],
  /** S2's and S4's, whose every request costs a real sign-in. */
  costlyConnections: [50, 100],
  /** Identity accounts (one gateway user each). */
  accounts: 300,
  /** Concurrent browsers while seeding. */
  seedWorkers: 24,
  /**
   * S2 measures about 10 s per level, every request redeeming a fresh code. Exchanges run about
   * 25 times as fast as real sign-ins make codes, so that takes minutes of seeding per level;
   * the 300 s handoff lifetime bounds it.
   */
  seedSeconds: 290,
  seedMaxCodes: 250_000,
  /**
   * The freshest codes of each S2 batch (at most a quarter of it) go to the split deployment's
   * level, right after the all-in-one's: a few seconds of its exchanges, warm-up included.
   */
  splitExchangeCodes: 12_000,
  /** Sessions introspected in rotation by S1 and S5. */
  introspectSessions: 300,
  /** Access tokens the peer introspects in rotation. */
  peerTokens: 20,
};
export type Profile = typeof FULL;

const QUICK: Profile = {
  warmupSeconds: 0.3,
  signInWarmupSeconds: 0.3,
  measureSeconds: 1,
  overloadSeconds: 1,
  // The quick run shows that refusals work: its one level is far beyond any capacity. A
  // capacity measured in a slow moment of a busy machine can be a tenth of what the gateway
  // serves a second later, so the level offers at least a rate no gateway here serves.
  overloadFactors: [10],
  overloadLeastRps: 10_000,
  connections: [50],
  costlyConnections: [5],
  accounts: 20,
  seedWorkers: 8,
  seedSeconds: 20,
  seedMaxCodes: 100,
  splitExchangeCodes: 30,
  introspectSessions: 40,
  peerTokens: 5,
};

export type BenchReport = {
  machine: Machine;
  startedAt: string;
  finishedAt?: string;
  mode: 'full' | 'quick';
  settings: Record<string, unknown>;
  results: ResultRow[];
  seeding?: Record<string, unknown>;
  memory?: Record<string, unknown>;
  /** S5's cost of a refusal and the bounds it sets (overload.ts). */
  overload?: Record<string, unknown>;
  targets?: TargetCheck[];
  notes: string[];
};

/** What every row reports of a level, whichever generator ran it. */
export type Measured = Pick<
  LoadResult,
  'rps' | 'p50Ms' | 'p99Ms' | 'errors' | 'requests' | 'durationSeconds' | 'statusCounts'
>;

export type MeasureSpec = {
  name: ScenarioName;
  url: string;
  requests: LoadRequest[];
  expectedStatuses: number[];
  serverPids: number[];
  /** Samples this process's RSS during each level (median in the row). */
  rssPid?: number;
  /** The split deployment's processes: each one's CPU per request and RSS in the row. */
  byProcess?: readonly BenchProcess[];
};

/** Databases, Redis connections, the processes started and the report of one bench run. */
export class BenchRun {
  readonly profile: Profile;
  readonly out: string;
  readonly logDir: string;
  private readonly started: BenchProcess[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];
  private readonly begin = Date.now();
  private closing: Promise<void> | undefined;

  private constructor(
    readonly options: BenchOptions,
    readonly report: BenchReport,
    readonly db: TestDatabase,
    readonly redisInfo: TestRedis,
    /** Keys under the run's prefix. */
    readonly redis: Redis,
    /** MEMORY USAGE, INFO and SCAN take full key names: a connection without the prefix. */
    readonly rawRedis: Redis,
  ) {
    this.profile = {
      ...(options.quick ? QUICK : FULL),
      ...(options.seedSeconds === undefined ? {} : { seedSeconds: options.seedSeconds }),
    };
    this.out = resolve(repoRoot, options.out);
    this.logDir = join(dirname(this.out), 'logs');
  }

  /** A database and a Redis key prefix of the run's own, removed by close(). */
  static async open(options: BenchOptions): Promise<BenchRun> {
    const [db, redisInfo] = await Promise.all([createTestDatabase(), createTestRedis()]);
    const report: BenchReport = {
      machine: describeMachine(),
      startedAt: new Date().toISOString(),
      mode: options.quick ? 'quick' : 'full',
      settings: {},
      results: [],
      notes: [],
    };
    const run = new BenchRun(
      options,
      report,
      db,
      redisInfo,
      new Redis(redisInfo.url, { keyPrefix: redisInfo.keyPrefix }),
      new Redis(redisInfo.url),
    );
    await mkdir(run.logDir, { recursive: true });
    report.settings = {
      ...run.profile,
      loadGenerator: 'autocannon (closed-loop) and open-loop.ts (S5), in the bench process',
      gatewayLogLevel: options.logLevel ?? 'info',
      rateLimits: 'RATE_LIMIT_* = 0: the figures are capacity, not configured limits',
    };
    report.machine.redis = /redis_version:(\S+)/.exec(await run.redis.info('server'))?.[1];
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ version: string }>(
      "select current_setting('server_version') as version",
    );
    await client.end();
    report.machine.postgres = rows[0]?.version;
    return run;
  }

  /** What every process gets to reach the run's database and Redis keys. */
  get dataEnv(): Record<string, string> {
    return {
      DATABASE_URL: this.db.url,
      REDIS_URL: this.redisInfo.url,
      REDIS_KEY_PREFIX: this.redisInfo.keyPrefix,
    };
  }

  readonly wanted = (name: ScenarioName): boolean =>
    this.options.only === undefined || this.options.only.includes(name);

  step(line: string): void {
    const seconds = ((Date.now() - this.begin) / 1000).toFixed(0);
    (this.options.log ?? ((text: string) => process.stdout.write(`${text}\n`)))(
      `[bench ${seconds}s] ${line}`,
    );
  }

  /**
   * Starts a TypeScript entry point of the repository, or of the checkout at `cwd`; `compiled`
   * runs its `tsc --build` output (processes.ts).
   */
  start(
    name: string,
    entry: string,
    env: Record<string, string>,
    args: string[] = [],
    cwd?: string,
    compiled = false,
  ) {
    const profileDir = join(dirname(this.out), 'cpu-prof', name);
    const child = startTsxProcess({
      name,
      entry,
      args,
      compiled,
      ...(cwd === undefined ? {} : { cwd }),
      env: { ...inheritedEnv(), ...env },
      logDir: this.logDir,
      nodeArgs: this.options.cpuProf === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    });
    this.started.push(child);
    return child;
  }

  async stop(child: BenchProcess): Promise<void> {
    await child.stop();
    this.started.splice(this.started.indexOf(child), 1);
  }

  /** Runs `cleanup` at close(), after the processes stopped (the latest registered first). */
  onClose(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  /** A warm-up (not recorded), then one measured closed-loop run per connection count. */
  async measure(spec: MeasureSpec): Promise<void> {
    const { profile } = this;
    this.step(
      `${spec.name}: warm-up ${profile.warmupSeconds}s, ${profile.measureSeconds}s a level`,
    );
    const load = {
      url: spec.url,
      requests: spec.requests,
      expectedStatuses: spec.expectedStatuses,
    };
    await runLoad({
      ...load,
      connections: profile.connections[0] ?? 50,
      durationSeconds: profile.warmupSeconds,
    });
    for (const connections of profile.connections) {
      const usage = await usageOver(spec.serverPids);
      const rss = spec.rssPid === undefined ? undefined : sampleRss(spec.rssPid);
      const byProcess =
        spec.byProcess === undefined ? undefined : await figuresByProcess(spec.byProcess);
      const result = await runLoad({
        ...load,
        connections,
        durationSeconds: profile.measureSeconds,
      });
      const cpu = await usage.done(result);
      const rssMedianBytes = (await rss?.stop())?.medianBytes;
      this.addRow(spec.name, connections, result, {
        ...cpu,
        ...(rssMedianBytes === undefined ? {} : { rssMedianBytes }),
        ...(await byProcess?.done(result.requests)),
      });
    }
  }

  addRow(name: string, connections: number, result: Measured, extra: object = {}): ResultRow {
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
    this.report.results.push(row);
    this.step(
      `  ${name} @${connections}: ${row.rps.toFixed(0)} req/s, p99 ${row.p99Ms} ms, ` +
        `errors ${row.errors} ${JSON.stringify(row.statusCounts)}`,
    );
    return row;
  }

  /** Stops every process still running and removes the run's database and Redis keys. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const child of [...this.started].reverse()) await child.stop().catch(() => undefined);
      for (const cleanup of [...this.cleanups].reverse()) await cleanup().catch(() => undefined);
      this.redis.disconnect();
      this.rawRedis.disconnect();
      await this.redisInfo.cleanup().catch(() => undefined);
      await this.db.drop().catch(() => undefined);
    })();
    return this.closing;
  }
}

/** Only what the processes need: no stray configuration from the caller's environment. */
function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
