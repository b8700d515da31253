// `pnpm bench [--quick] [--out <file>] [--only <scenario,...>] [--cpu-prof] [--alloc-prof]
//   [--alloc-survivors] [--seed-seconds <n>] [--log-level <level>]`
// Issue 8's benchmark: see docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { runBench, SCENARIOS, type ScenarioName } from './bench.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results/latest.json' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'alloc-prof': { type: 'boolean', default: false },
    'alloc-survivors': { type: 'boolean', default: false },
    'seed-seconds': { type: 'string' },
    'log-level': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(
    `pnpm bench [--quick] [--out <file>] [--only <scenario,...>] [--cpu-prof] [--alloc-prof] [--alloc-survivors] [--seed-seconds <n>] [--log-level <level>]\n` +
      `scenarios: ${SCENARIOS.join(', ')}\n`,
  );
  process.exit(0);
}

const seedSeconds =
  values['seed-seconds'] === undefined ? undefined : Number(values['seed-seconds']);
if (seedSeconds !== undefined && !(seedSeconds > 0)) {
  process.stderr.write('--seed-seconds takes a number of seconds above 0\n');
  process.exit(2);
}

const only = values.only?.split(',').map((name) => name.trim());
for (const name of only ?? []) {
  if (!(SCENARIOS as readonly string[]).includes(name)) {
    process.stderr.write(`unknown scenario ${name}; one of ${SCENARIOS.join(', ')}\n`);
    process.exit(2);
  }
}

try {
  const report = await runBench({
    quick: values.quick,
    out: values.out,
    ...(only === undefined ? {} : { only: only as ScenarioName[] }),
    cpuProf: values['cpu-prof'],
    allocProf: values['alloc-prof'] || values['alloc-survivors'],
    allocSurvivors: values['alloc-survivors'],
    ...(values['seed-seconds'] === undefined
      ? {}
      : { seedSeconds: Number(values['seed-seconds']) }),
    ...(values['log-level'] === undefined ? {} : { logLevel: values['log-level'] }),
  });
  // --quick proves the harness works: any error but the expected 429/503 of overload fails it.
  const failed = report.results.filter((row) => row.name !== 'overload' && row.errors > 0);
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
