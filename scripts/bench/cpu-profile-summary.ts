// `tsx scripts/bench/cpu-profile-summary.ts <file.cpuprofile> [report.json [scenario]]`
// Top self-time functions of a V8 CPU profile (from `pnpm bench --cpu-prof`), optionally only
// the samples taken while the bench measured `scenario` (default introspect-allinone; the
// windows are in the report's settings.cpuProfileWindows), and self time per package.
import { readFile } from 'node:fs/promises';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
};

type SelfTime = { name: string; ms: number; pct: number };

function summarizeProfile(
  profile: CpuProfile,
  windows: { startUs: number; endUs: number }[] = [],
): { totalMs: number; functions: SelfTime[]; packages: SelfTime[]; inclusive: SelfTime[] } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  // Time with a package anywhere on the stack (what calling into it costs, callees included).
  const inclusive = new Map<string, number>();
  let time = profile.startTime;
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    time += delta;
    if (windows.length > 0 && !windows.some((w) => time >= w.startUs && time <= w.endUs)) return;
    const frame = nodes.get(id)?.callFrame;
    if (frame === undefined) return;
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where}${where === '' ? '' : `:${frame.lineNumber + 1}`}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const pkg = packageOf(frame.url, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + delta);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const callFrame = nodes.get(at)?.callFrame;
      if (callFrame !== undefined && callFrame.url !== '')
        onStack.add(packageOf(callFrame.url, ''));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + delta);
    total += delta;
  });
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 100) / 10,
        pct: total === 0 ? 0 : Math.round((us / total) * 1000) / 10,
      }));
  return {
    totalMs: Math.round(total / 1000),
    functions: rank(byFunction),
    packages: rank(byPackage),
    inclusive: rank(inclusive),
  };
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0)
    return url
      .slice(modules + '/node_modules/'.length)
      .replace(/^\.pnpm\/[^/]+\/node_modules\//, '');
  const repo = /\/(services|packages|scripts)\/.*$/.exec(url);
  if (repo !== null) return repo[0].slice(1);
  return url.replace(/^node:/, 'node:');
}

function packageOf(url: string, functionName: string): string {
  if (url === '') {
    return functionName === '(garbage collector)' ||
      functionName === '(idle)' ||
      functionName === '(program)'
      ? functionName
      : '(native)';
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const repo = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (repo !== null) return `@gateway/${repo[2]}`;
  return url;
}

async function main() {
  const [file, reportFile, scenario = 'introspect-allinone'] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write('usage: cpu-profile-summary <file.cpuprofile> [report.json [scenario]]\n');
    process.exit(2);
  }
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  let windows: { name: string; startUs: number; endUs: number }[] = [];
  if (reportFile !== undefined) {
    const report = JSON.parse(await readFile(reportFile, 'utf8')) as {
      settings: { cpuProfileWindows?: { name: string; startUs: number; endUs: number }[] };
    };
    windows = (report.settings.cpuProfileWindows ?? []).filter((w) => w.name === scenario);
  }
  const summary = summarizeProfile(profile, windows);
  const lines = [
    `${summary.totalMs} ms of samples${windows.length > 0 ? ` while measuring ${scenario}` : ''}`,
    '',
    'self time by package:',
    ...summary.packages.slice(0, 20).map((p) => `${p.pct.toFixed(1).padStart(5)}%  ${p.name}`),
    '',
    'time with the package on the stack (callees included):',
    ...summary.inclusive.slice(0, 25).map((p) => `${p.pct.toFixed(1).padStart(5)}%  ${p.name}`),
    '',
    'top self-time functions:',
    ...summary.functions.slice(0, 30).map((f) => `${f.pct.toFixed(1).padStart(5)}%  ${f.name}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
