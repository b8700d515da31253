import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { startGateway, startIdentityProvider, startSplit } from './gateway.js';
import { measureOverload } from './overload.js';
import { rssBytes } from './processes.js';
import { addRatios, formatTable, formatTargets, round2 } from './report.js';
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
    await measureBaselines(run);
    await measurePeer(run);
    if (GATEWAY_SCENARIOS.some(run.wanted)) await measureGateway(run);
  } finally {
    await run.close();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  return writeReport(run);
}

/** S1-S6 against the all-in-one gateway, then S1 against the split deployment. */
async function measureGateway(run: BenchRun): Promise<void> {
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
  if (run.wanted('signin')) await measureSignIn(run, gateway, idp);
  if (run.wanted('overload')) await measureOverload(run, gateway, requests);
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
  log(`\ntargets:\n${formatTargets(report.targets)}`);
  for (const note of report.notes) log(`note: ${note}`);
  run.step(`written to ${run.out}`);
  return report;
}
