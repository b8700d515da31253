// `tsx scripts/bench/cpu-profile-summary.ts <file.cpuprofile> [report.json [scenario]]`
// Top self-time functions of a V8 CPU profile (from `pnpm bench --cpu-prof`), optionally only
// the samples taken while the bench measured `scenario` (default introspect-allinone; the
// windows are in the report's settings.cpuProfileWindows), and self time per package.
// `tsx scripts/bench/cpu-profile-summary.ts <file.heapprofile>`: the same for an allocation
// profile of one measured level (`pnpm bench --alloc-prof`), in bytes allocated, or of what
// survived a scavenge (`--alloc-survivors`, files named `*.survivors.heapprofile`).
import { readFile } from 'node:fs/promises';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
};
/** A sampling heap profile (`pnpm bench --alloc-prof`): a tree of allocation sites. */
type HeapNode = { id: number; callFrame: CallFrame; selfSize: number; children: HeapNode[] };
type HeapProfile = { head: HeapNode };

type Share = { name: string; amount: number; pct: number };
/** What a profile weighs: microseconds of samples, or bytes allocated. */
type Weighed = { nodes: ProfileNode[]; weights: { id: number; weight: number }[] };

function cpuWeights(profile: CpuProfile, windows: { startUs: number; endUs: number }[]): Weighed {
  let time = profile.startTime;
  const weights: Weighed['weights'] = [];
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    time += delta;
    if (windows.length > 0 && !windows.some((w) => time >= w.startUs && time <= w.endUs)) return;
    weights.push({ id, weight: delta });
  });
  return { nodes: profile.nodes, weights };
}

function heapWeights(profile: HeapProfile): Weighed {
  const nodes: ProfileNode[] = [];
  const weights: Weighed['weights'] = [];
  const visit = (node: HeapNode) => {
    nodes.push({
      id: node.id,
      callFrame: node.callFrame,
      children: node.children.map((c) => c.id),
    });
    if (node.selfSize > 0) weights.push({ id: node.id, weight: node.selfSize });
    node.children.forEach(visit);
  };
  visit(profile.head);
  return { nodes, weights };
}

function summarize({ nodes: list, weights }: Weighed): {
  total: number;
  functions: Share[];
  packages: Share[];
  inclusive: Share[];
} {
  const nodes = new Map(list.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of list) for (const child of node.children ?? []) parents.set(child, node.id);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  // Weight with a package anywhere on the stack (what calling into it costs, callees included).
  const inclusive = new Map<string, number>();
  let total = 0;
  for (const { id, weight } of weights) {
    const frame = nodes.get(id)?.callFrame;
    if (frame === undefined) continue;
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where}${where === '' ? '' : `:${frame.lineNumber + 1}`}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + weight);
    const pkg = packageOf(frame.url, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + weight);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const callFrame = nodes.get(at)?.callFrame;
      if (callFrame !== undefined && callFrame.url !== '')
        onStack.add(packageOf(callFrame.url, ''));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + weight);
    total += weight;
  }
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, amount]) => ({
        name,
        amount,
        pct: total === 0 ? 0 : Math.round((amount / total) * 1000) / 10,
      }));
  return {
    total,
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
    process.stderr.write(
      'usage: cpu-profile-summary <file.cpuprofile> [report.json [scenario]]\n' +
        '       cpu-profile-summary <file.heapprofile>\n',
    );
    process.exit(2);
  }
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile | HeapProfile;
  if ('head' in profile) {
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    print(summarize(heapWeights(profile)), {
      total: (bytes) =>
        file.endsWith('.survivors.heapprofile')
          ? `${mb(bytes)} allocated that survived a scavenge (sampled: promoted to the old generation, or alive at the end)`
          : `${mb(bytes)} allocated (sampled, objects already collected included)`,
      packages: 'allocated by package (where the allocation happened):',
      inclusive: 'allocated with the package on the stack (callees included):',
      functions: 'top allocating functions:',
      amount: (bytes) => `  ${mb(bytes).padStart(9)}`,
    });
    return;
  }
  let windows: { name: string; startUs: number; endUs: number }[] = [];
  if (reportFile !== undefined) {
    const report = JSON.parse(await readFile(reportFile, 'utf8')) as {
      settings: { cpuProfileWindows?: { name: string; startUs: number; endUs: number }[] };
    };
    windows = (report.settings.cpuProfileWindows ?? []).filter((w) => w.name === scenario);
  }
  print(summarize(cpuWeights(profile, windows)), {
    total: (us) =>
      `${Math.round(us / 1000)} ms of samples${windows.length > 0 ? ` while measuring ${scenario}` : ''}`,
    packages: 'self time by package:',
    inclusive: 'time with the package on the stack (callees included):',
    functions: 'top self-time functions:',
    amount: () => '',
  });
}

function print(
  summary: ReturnType<typeof summarize>,
  labels: {
    total: (amount: number) => string;
    packages: string;
    inclusive: string;
    functions: string;
    amount: (amount: number) => string;
  },
): void {
  const pct = (share: Share) => `${share.pct.toFixed(1).padStart(5)}%`;
  const lines = [
    labels.total(summary.total),
    '',
    labels.packages,
    ...summary.packages.slice(0, 20).map((p) => `${pct(p)}  ${p.name}`),
    '',
    labels.inclusive,
    ...summary.inclusive.slice(0, 25).map((p) => `${pct(p)}  ${p.name}`),
    '',
    labels.functions,
    ...summary.functions.slice(0, 30).map((f) => `${pct(f)}${labels.amount(f.amount)}  ${f.name}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
