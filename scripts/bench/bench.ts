import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestDatabase, createTestRedis } from '@gateway/testkit';
import {
  compileCheckout,
  checkOutBaselineBuild,
  DEFAULT_BASELINE_REF,
  existingBaselineBuild,
  type BaselineBuild,
} from './baseline-build.js';
import {
  startGateway,
  startIdentityProvider,
  startSplit,
  type GatewayUnderTest,
  type IdentityProvider,
  type SplitUnderTest,
} from './gateway.js';
import type { LoadRequest } from './load.js';
import { measureOverload } from './overload.js';
import { repoRoot, rssBytes } from './processes.js';
import {
  addRatios,
  addSplitRatios,
  describeRefusalCost,
  formatTable,
  formatTargets,
  round2,
} from './report.js';
import {
  BenchRun,
  SPLIT_SCENARIOS,
  type BenchOptions,
  type BenchReport,
  type ScenarioName,
} from './run.js';
import {
  checkIntrospection,
  introspectRequests,
  measureBaselines,
  measureExchange,
  measurePeer,
  measureSessionBytes,
  measureSignIn,
  seed,
  seedTarget,
} from './scenarios.js';
import { checkTargets } from './targets.js';

export { SCENARIOS, type BenchOptions, type BenchReport, type ScenarioName } from './run.js';

const GATEWAY_SCENARIOS: ScenarioName[] = [
  'introspect-allinone',
  'exchange',
  'start',
  'signin',
  'overload',
  'memory',
  ...(Object.keys(SPLIT_SCENARIOS) as ScenarioName[]),
];

/**
 * `pnpm bench`: the baselines, the peer and the gateway's scenarios in one run, every server
 * in a process of its own; writes the report and prints the table and the targets.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const run = await BenchRun.open(options);
  // Whatever happens (an error, Ctrl-C), the processes stop and the run's data goes away.
  const interrupted = () => {
    run.step('interrupted: stopping the processes, dropping the database and the Redis keys');
    void run.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    // Installed before anything is measured, so the install takes no CPU from a scenario.
    const baselineBuild = await prepareBaselineBuild(run);
    if (GATEWAY_SCENARIOS.some(run.wanted)) {
      run.step('compiling the gateway (tsc --build): its processes run compiled, as deployed');
      await compileCheckout(repoRoot, join(run.logDir, 'compile.log'));
    }
    await measureBaselines(run);
    await measurePeer(run);
    if (GATEWAY_SCENARIOS.some(run.wanted)) await measureGateway(run, baselineBuild);
  } finally {
    await run.close();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  return writeReport(run);
}

/**
 * The build S4 is compared with: `--baseline-dir`, else a checkout of `--baseline-ref`
 * (default: the baseline commit in full runs, none in quick runs; `none`: no comparison).
 */
async function prepareBaselineBuild(run: BenchRun): Promise<BaselineBuild | undefined> {
  if (!run.wanted('signin')) return undefined;
  const { baselineDir, quick } = run.options;
  const ref = run.options.baselineRef ?? (quick ? 'none' : DEFAULT_BASELINE_REF);
  if (baselineDir === undefined && ref === 'none') return undefined;
  run.step(`S4 baseline build: ${baselineDir ?? `checking out and installing ${ref}`}`);
  const build =
    baselineDir === undefined
      ? await checkOutBaselineBuild(ref, join(run.logDir, 'baseline-install.log'), (remove) =>
          run.onClose(remove),
        )
      : await existingBaselineBuild(baselineDir);
  run.report.settings.signInBaseline = { ref: build.ref, commit: build.commit };
  run.step(`  S4 baseline build ${build.commit.slice(0, 12)} in ${build.dir}`);
  return build;
}

/**
 * S4 against another build's all-in-one gateway: the same identity provider and
 * configuration, a database and Redis keys of its own (its schema is its own version's).
 */
async function measureBaselineSignIn(
  run: BenchRun,
  idp: IdentityProvider,
  build: BaselineBuild,
): Promise<void> {
  const [db, redis] = await Promise.all([createTestDatabase(), createTestRedis()]);
  run.onClose(async () => {
    await redis.cleanup();
    await db.drop();
  });
  const gateway = await startGateway(run, idp, {
    name: 'gateway-baseline',
    dir: build.dir,
    dataEnv: { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.keyPrefix },
  });
  await measureSignIn(run, deployed(gateway), idp, 'signin-baseline', {
    baselineRef: build.ref,
    baselineCommit: build.commit,
  });
  await run.stop(gateway.process);
}

/**
 * S1-S6 against the all-in-one gateway, each split scenario right after its all-in-one
 * counterpart (so both meet the machine in the same minute), with the split deployment
 * running beside the all-in-one one on the same database and Redis keys.
 */
async function measureGateway(run: BenchRun, baselineBuild?: BaselineBuild): Promise<void> {
  const { profile } = run;
  /** A scenario, or the split one judged against it (which needs its figures). */
  const measured = (name: ScenarioName) =>
    run.wanted(name) ||
    Object.entries(SPLIT_SCENARIOS).some(
      ([split, allInOne]) => allInOne === name && run.wanted(split as ScenarioName),
    );
  const idp = await startIdentityProvider(run);
  const gateway = await startGateway(run, idp);
  const split = Object.keys(SPLIT_SCENARIOS).some((name) => run.wanted(name as ScenarioName))
    ? await startSplit(run, gateway)
    : undefined;
  const splitFor = (name: ScenarioName) => (run.wanted(name) ? split : undefined);
  const exchangeSplit = splitFor('exchange-split');
  const pool = await seed(
    run,
    gateway,
    measured('exchange') ? seedTarget(run, exchangeSplit) : profile.introspectSessions,
    split,
  );
  if (pool.length < profile.introspectSessions) {
    throw new Error(`only ${pool.length} sign-ins were seeded`);
  }
  const sessions = pool.slice(0, profile.introspectSessions).map((each) => each.sessionToken);
  if (measured('exchange')) await measureExchange(run, gateway, pool, exchangeSplit);
  const requests = introspectRequests(gateway, sessions);
  if (measured('introspect-allinone') || run.wanted('overload')) {
    await measureIntrospection(run, gateway, sessions, splitFor('introspect-split'));
  }
  if (measured('start')) await measureStart(run, gateway, splitFor('start-split'));
  if (measured('signin')) {
    await measureSignIn(run, deployed(gateway), idp);
    const signInSplit = splitFor('signin-split');
    if (signInSplit !== undefined) await measureSignIn(run, signInSplit, idp, 'signin-split');
    if (baselineBuild !== undefined) await measureBaselineSignIn(run, idp, baselineBuild);
  }
  for (const each of split?.processes ?? []) await run.stop(each);
  const gatewayPid = gateway.process.pid;
  if (run.wanted('overload')) await measureOverload(run, gateway, requests, [idp.process.pid]);
  if (run.wanted('memory')) await measureSessionBytes(run);
  run.report.settings.gatewayRssAtStartBytes = gateway.rssAtStartBytes;
  run.report.settings.gatewayRssAtEndBytes = await rssBytes(gatewayPid);
  await run.stop(gateway.process);
  await run.stop(idp.process);
}

/** The all-in-one gateway as S4 measures a deployment: where to sign in, whose CPU counts. */
function deployed(gateway: GatewayUnderTest) {
  return { target: gateway.target, processes: [gateway.process] };
}

/** S1 against the all-in-one gateway, then against the split deployment. */
async function measureIntrospection(
  run: BenchRun,
  gateway: GatewayUnderTest,
  sessions: string[],
  split: SplitUnderTest | undefined,
): Promise<void> {
  const [session = ''] = sessions;
  const requests = introspectRequests(gateway, sessions);
  const gatewayPid = gateway.process.pid;
  await checkIntrospection(gateway.url, gateway, session);
  await run.measure({
    name: 'introspect-allinone',
    url: gateway.url,
    requests,
    expectedStatuses: [200],
    serverPids: [gatewayPid],
    rssPid: gatewayPid,
  });
  if (split === undefined) return;
  await checkIntrospection(split.url, gateway, session);
  await run.measure({
    name: 'introspect-split',
    url: split.url,
    requests,
    expectedStatuses: [200],
    serverPids: split.processes.map((each) => each.pid),
    byProcess: split.processes,
  });
}

/** S3 against the all-in-one gateway, then against the split deployment. */
async function measureStart(
  run: BenchRun,
  gateway: GatewayUnderTest,
  split: SplitUnderTest | undefined,
): Promise<void> {
  const requests: LoadRequest[] = [
    { method: 'GET', path: '/v1/auth/start?platformKey=BENCH&returnTo=%2F' },
  ];
  await run.measure({
    name: 'start',
    url: gateway.url,
    requests,
    expectedStatuses: [302],
    serverPids: [gateway.process.pid],
  });
  if (split === undefined) return;
  await run.measure({
    name: 'start-split',
    url: split.url,
    requests,
    expectedStatuses: [302],
    serverPids: split.processes.map((each) => each.pid),
    byProcess: split.processes,
  });
}

async function writeReport(run: BenchRun): Promise<BenchReport> {
  const { report } = run;
  addRatios(report.results);
  addSplitRatios(report.results, SPLIT_SCENARIOS);
  report.targets = checkTargets(report);
  report.machine.loadAverageAtEnd = loadavg().map(round2);
  report.finishedAt = new Date().toISOString();
  await mkdir(dirname(run.out), { recursive: true });
  await writeFile(run.out, `${JSON.stringify(report, null, 2)}\n`);
  const log = run.options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  log(`\n${formatTable(report.results)}`);
  if (report.memory !== undefined) log(`\nmemory: ${JSON.stringify(report.memory)}`);
  if (report.overload !== undefined) log(`\n${describeRefusalCost(report.overload)}`);
  log(`\ntargets:\n${formatTargets(report.targets)}`);
  for (const note of report.notes) log(`note: ${note}`);
  run.step(`written to ${run.out}`);
  return report;
}
