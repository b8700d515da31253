import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { compileCheckout } from './baseline-build.js';
import type { BenchReport } from './bench.js';
import { repoRoot } from './processes.js';
import { refusalsAreProper } from './targets.js';

// The smoke run of the bench: every scenario once, briefly. It proves the harness works (rows
// produced, no errors, overload refused properly), never how fast anything is.
const scenarios = [
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
];

/** `pnpm bench --quick`, run as the bench script runs it, without needing pnpm on PATH. */
function runQuickBench(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@gateway/source',
        '--import',
        'tsx',
        'scripts/bench/main.ts',
        '--quick',
        '--out',
        out,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('pnpm bench --quick', () => {
  let dir: string | undefined;
  // The gateway's processes run compiled (tsc --build), as the bench runs them: compiled here
  // first, a fresh clone's first build being the long part, so the bench's own build finds it
  // done.
  beforeAll(async () => {
    await compileCheckout(repoRoot, join(tmpdir(), `gateway-bench-compile-${process.pid}.log`));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('measures every scenario once, without errors, and writes the report', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
    const out = join(dir, 'latest.json');
    const { code, output } = await runQuickBench(out);
    if (code !== 0) throw new Error(`bench --quick exited with ${code}:\n${output}`);

    const report = JSON.parse(await readFile(out, 'utf8')) as BenchReport;
    for (const name of scenarios) {
      const rows = report.results.filter((row) => row.name === name);
      expect({ name, levels: rows.length }).toEqual({ name, levels: 1 });
      for (const row of rows) {
        expect({ name, answered: row.requests > 0, errors: row.errors }).toEqual({
          name,
          answered: true,
          errors: 0,
        });
      }
    }
    const [overload] = report.results.filter((row) => row.name === 'overload');
    // Offered far beyond the capacity measured right before it: the excess is refused, each
    // refusal a 503 with the error body and Retry-After, and nothing times out.
    expect(overload?.statusCounts['503']).toBeGreaterThan(0);
    expect(overload === undefined ? false : refusalsAreProper(overload)).toBe(true);
    expect(overload?.timeouts).toBe(0);
    // What a refusal costs is measured with the gateway on a CPU of its own.
    expect(typeof overload?.refusalCostRatio).toBe('number');
    expect(report.settings.overloadPinning).toMatchObject({
      gatewayCpu: expect.any(Number),
      loadGeneratorCpu: expect.any(Number),
    });
    const [signIn] = report.results.filter((row) => row.name === 'signin');
    expect(signIn?.gatewayCpuMsPerSignIn).toBeGreaterThan(0);
    expect(signIn?.identityCpuMsPerSignIn).toBeGreaterThan(0);
    // Each split row is compared with its all-in-one row of the same run, and shows what each
    // of the four processes used and held.
    for (const name of ['introspect-split', 'exchange-split', 'start-split', 'signin-split']) {
      const [split] = report.results.filter((row) => row.name === name);
      expect({ name, ratio: typeof split?.cpuRatioToAllInOne }).toEqual({ name, ratio: 'number' });
      expect(Object.keys(split?.rssMedianBytesByProcess ?? {}).sort()).toEqual([
        'split-auth-flow',
        'split-edge',
        'split-onboarding',
        'split-registry',
      ]);
    }
    expect(report.memory?.redisBytesPerSession).toBeGreaterThan(0);
    // Whether the targets hold is not the smoke test's business; that they are all listed is.
    expect(report.targets).toHaveLength(15);
  });
});
