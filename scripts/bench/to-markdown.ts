// `tsx scripts/bench/to-markdown.ts [bench-results/latest.json]`: a bench report as the
// "Latest figures" section of docs/benchmarks.md (the machine, the figures, the targets, what
// a refusal costs in S5).
import { readFile } from 'node:fs/promises';
import type { BenchReport } from './bench.js';
import { describeRefusalCost, formatMachine, formatTable, formatTargets } from './report.js';

const report = JSON.parse(
  await readFile(process.argv[2] ?? 'bench-results/latest.json', 'utf8'),
) as BenchReport;
const memory = report.memory?.redisBytesPerSession;
process.stdout.write(
  [
    formatMachine(report.startedAt, report.machine),
    formatTable(report.results),
    formatTargets(report.targets ?? []),
    ...(report.overload === undefined ? [] : [describeRefusalCost(report.overload)]),
    ...(typeof memory === 'number' ? [`S6: ${memory} B of Redis per live session.`] : []),
  ].join('\n\n') + '\n',
);
