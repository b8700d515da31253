// `tsx scripts/bench/to-markdown.ts [bench-results/latest.json]`: the figures of a bench report
// as the Markdown tables of docs/benchmarks.md.
import { readFile } from 'node:fs/promises';
import type { BenchReport } from './bench.js';
import { rowNotes } from './report.js';

const file = process.argv[2] ?? 'bench-results/latest.json';
const report = JSON.parse(await readFile(file, 'utf8')) as BenchReport;
const m = report.machine;
const mb = (bytes: unknown) => `${(Number(bytes) / 2 ** 20).toFixed(0)} MiB`;
const lines: string[] = [];

lines.push(
  `Run of ${report.startedAt} (${report.mode}), ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ` +
    `Linux ${m.kernel}, Node ${m.node}, PostgreSQL ${m.postgres ?? '?'}, Redis ${m.redis ?? '?'}; ` +
    `load average ${m.loadAverageAtStart.join(' / ')} at the start and ` +
    `${(m.loadAverageAtEnd ?? []).join(' / ')} at the end.`,
  '',
  '| scenario | conns | req/s | p50 ms | p99 ms | errors | vs (c) | server CPU ms/req | notes |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---|',
);
for (const row of report.results) {
  lines.push(
    `| ${row.name} | ${row.connections} | ${row.rps.toFixed(0)} | ${row.p50Ms.toFixed(1)} | ${row.p99Ms.toFixed(1)} | ${row.errors} | ${row.ratioToBaseline?.toFixed(2) ?? '-'} | ${typeof row.serverCpuMsPerRequest === 'number' ? row.serverCpuMsPerRequest.toFixed(2) : '-'} | ${rowNotes(row).join('; ')} |`,
  );
}
if (report.seeding !== undefined) {
  const s = report.seeding;
  lines.push(
    '',
    `Seeding: ${String(s.signIns)} real sign-ins in ${String(s.seconds)} s (${String(s.signInsPerSecond)}/s, ` +
      `${String(s.concurrentBrowsers)} returning browsers, ${String(s.failures)} failures); ` +
      `gateway ${String(s.gatewayCpuMsPerSignIn)} ms and identity service ${String(s.identityCpuMsPerSignIn)} ms CPU per sign-in.`,
  );
}
if (report.memory !== undefined) {
  const mem = report.memory;
  lines.push(
    '',
    `Memory: ${String(mem.liveSessions)} live sessions of ${String(mem.users)} users: ` +
      `${String(mem.redisBytesPerSession)} B of Redis per session ` +
      `(${String(mem.redisSessionKeyBytes)} B per s: key, value ${String(mem.sessionValueBytes)} B of which ` +
      `${String(mem.idTokenEncryptedBytes)} B encrypted ID token; ${String(mem.redisUserIndexBytesPerSession)} B of us: index); ` +
      `${String(mem.redisBytesPerRealSession)} B per session with the ${String(mem.realSignInSessions)} sign-in sessions only; ` +
      `INFO used_memory delta ${String(mem.infoUsedMemoryDeltaPerSession)} B per session. ` +
      `Gateway RSS ${mb(mem.gatewayRssAtStartBytes)} after start, ${mb(mem.gatewayRssBeforeWritesBytes)} before and ` +
      `${mb(mem.gatewayRssAfterWritesBytes)} after the sessions were written, ${mb(mem.gatewayRssAfterPassBytes)} after ` +
      `introspecting ${String((mem.introspectPass as { requests: number }).requests)} distinct sessions.`,
  );
}
lines.push('', '| target (issue 8) | now | holds |', '|---|---|---|');
for (const check of report.targets ?? []) {
  lines.push(
    `| ${check.target} | ${check.value.replace(/\|/g, '/')} | ${check.holds === null ? 'not measured' : check.holds ? 'yes' : '**no**'} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
