// `pnpm bench [--quick] [--out <file>] [--only <scenario,...>] [--seed-seconds <n>]
//   [--log-level <level>] [--cpu-prof] [--baseline-ref <git-ref> | --baseline-dir <path>]`:
//   see docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { runBench, SCENARIOS, type ScenarioName } from './bench.js';

const USAGE =
  'pnpm bench [--quick] [--out <file>] [--only <scenario,...>] [--seed-seconds <n>] ' +
  '[--log-level <level>] [--cpu-prof] [--baseline-ref <git-ref> | --baseline-dir <path>]\n' +
  `scenarios: ${SCENARIOS.join(', ')}\n`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results/latest.json' },
    only: { type: 'string' },
    'seed-seconds': { type: 'string' },
    'log-level': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'baseline-ref': { type: 'string' },
    'baseline-dir': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const seedSeconds =
  values['seed-seconds'] === undefined ? undefined : Number(values['seed-seconds']);
if (seedSeconds !== undefined && !(seedSeconds > 0)) {
  process.stderr.write('--seed-seconds takes a number of seconds above 0\n');
  process.exit(2);
}

const only = values.only?.split(',').map((name) => name.trim());
const unknown = only?.filter((name) => !(SCENARIOS as readonly string[]).includes(name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario ${unknown.join(', ')}\n${USAGE}`);
  process.exit(2);
}

if (values['baseline-ref'] !== undefined && values['baseline-dir'] !== undefined) {
  process.stderr.write('--baseline-ref and --baseline-dir name the same build: give one\n');
  process.exit(2);
}

try {
  const report = await runBench({
    quick: values.quick,
    out: values.out,
    ...(only === undefined ? {} : { only: only as ScenarioName[] }),
    ...(seedSeconds === undefined ? {} : { seedSeconds }),
    ...(values['log-level'] === undefined ? {} : { logLevel: values['log-level'] }),
    cpuProf: values['cpu-prof'],
    ...(values['baseline-ref'] === undefined ? {} : { baselineRef: values['baseline-ref'] }),
    ...(values['baseline-dir'] === undefined ? {} : { baselineDir: values['baseline-dir'] }),
  });
  // Errors are never expected (S5's 503 refusals are expected answers, not errors): a run
  // with any fails, so --quick proves the harness works.
  const failed = report.results.filter((row) => row.errors > 0);
  if (failed.length > 0) {
    process.stderr.write(
      `errors in: ${failed.map((row) => `${row.name}@${row.connections}`).join(', ')}\n`,
    );
    process.exitCode = 1;
  }
} catch (error) {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
}
// autocannon and fetch keep sockets around for a moment; the report is written.
process.exit();
