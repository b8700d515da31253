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
  type IdentityProvider,
} from './gateway.js';
import { measureOverload } from './overload.js';
import { repoRoot, rssBytes } from './processes.js';
import { addRatios, describeRefusalCost, formatTable, formatTargets, round2 } from './report.js';
import { BenchRun, type BenchOptions, type BenchReport, type ScenarioName } from './run.js';
import {
  checkIntrospection,
  introspectRequests,
  measureBaselines,
  measureExchange,
  measurePeer,
  measureSessionBytes,
  measureSignIn,
  seed,
} from './scenarios.js';
import { checkTargets } from './targets.js';

export { SCENARIOS, type BenchOptions, type BenchReport, type ScenarioName } from './run.js';

const GATEWAY_SCENARIOS: ScenarioName[] = [
  'introspect-allinone',
  'introspect-split',
  'exchange',
  'start',
  'signin',
  'overload',
  'memory',
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
  await measureSignIn(run, gateway, idp, 'signin-baseline', {
    baselineRef: build.ref,
    baselineCommit: build.commit,
  });
  await run.stop(gateway.process);
}

/** S1-S6 against the all-in-one gateway, then S1 against the split deployment. */
async function measureGateway(run: BenchRun, baselineBuild?: BaselineBuild): Promise<void> {
  const { profile } = run;
  const idp = await startIdentityProvider(run);
  const gateway = await startGateway(run, idp);
  const pool = await seed(
    run,
    gateway,
    run.wanted('exchange') ? profile.seedMaxCodes : profile.introspectSessions,
  );
  if (pool.length < profile.introspectSessions) {
    throw new Error(`only ${pool.length} sign-ins were seeded`);
  }
  const sessions = pool.slice(0, profile.introspectSessions).map((each) => each.sessionToken);
  const [session = ''] = sessions;
  if (run.wanted('exchange')) await measureExchange(run, gateway, pool);
  const requests = introspectRequests(gateway, sessions);
  const gatewayPid = gateway.process.pid;
  if (run.wanted('introspect-allinone') || run.wanted('overload')) {
    await checkIntrospection(gateway.url, gateway, session);
    await run.measure({
      name: 'introspect-allinone',
      url: gateway.url,
      requests,
      expectedStatuses: [200],
      serverPids: [gatewayPid],
      rssPid: gatewayPid,
    });
  }
  if (run.wanted('start')) {
    await run.measure({
      name: 'start',
      url: gateway.url,
      requests: [{ method: 'GET', path: '/v1/auth/start?platformKey=BENCH&returnTo=%2F' }],
      expectedStatuses: [302],
      serverPids: [gatewayPid],
    });
  }
  if (run.wanted('signin')) {
    await measureSignIn(run, gateway, idp);
    // Right after, so both builds meet the machine in the same minute.
    if (baselineBuild !== undefined) await measureBaselineSignIn(run, idp, baselineBuild);
  }
  if (run.wanted('overload')) await measureOverload(run, gateway, requests, [idp.process.pid]);
  if (run.wanted('memory')) await measureSessionBytes(run);
  run.report.settings.gatewayRssAtStartBytes = gateway.rssAtStartBytes;
  run.report.settings.gatewayRssAtEndBytes = await rssBytes(gatewayPid);
  await run.stop(gateway.process);
  if (run.wanted('introspect-split')) {
    const split = await startSplit(run, gateway);
    await checkIntrospection(split.url, gateway, session);
    await run.measure({
      name: 'introspect-split',
      url: split.url,
      requests,
      expectedStatuses: [200],
      serverPids: split.processes.map((each) => each.pid),
    });
    for (const each of split.processes) await run.stop(each);
  }
  await run.stop(idp.process);
}

async function writeReport(run: BenchRun): Promise<BenchReport> {
  const { report } = run;
  addRatios(report.results);
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
