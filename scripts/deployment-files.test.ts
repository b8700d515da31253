import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from '@jest/globals';
import { configVariables, loadConfig, requireConfigValues } from '@gateway/config';

// The Dockerfile, docker-compose.yml and the collector configuration cannot be built or
// started here (tests need no Docker engine), so this file checks that they agree with the
// code: targets, entry points, configuration variables, service addresses and ports.

const root = fileURLToPath(new URL('..', import.meta.url));
const readRepoFile = (path: string): string => readFileSync(join(root, path), 'utf8');

// ---------------------------------------------------------------------------------------
// A reader for the YAML these files use. The `yaml` package is not a dependency of the
// workspace root, so this covers the subset written here: block mappings and sequences,
// plain and quoted scalars, flow sequences, `{}`, comments, anchors, aliases and `<<`
// merge keys. Anything else fails with the line number rather than being misread.
// ---------------------------------------------------------------------------------------

type Yaml = string | null | Yaml[] | YamlMap;
type YamlMap = { [key: string]: Yaml };
type YamlLine = { number: number; indent: number; text: string };

function yamlLines(source: string): YamlLine[] {
  const lines: YamlLine[] = [];
  source.split('\n').forEach((raw, position) => {
    const text = withoutComment(raw).trimEnd();
    if (text.trim() === '') return;
    const indent = text.length - text.trimStart().length;
    if (text.slice(0, indent).includes('\t')) {
      throw new Error(`YAML line ${position + 1}: tab in indentation`);
    }
    lines.push({ number: position + 1, indent, text: text.trim() });
  });
  return lines;
}

function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return line.slice(0, i);
    }
  }
  return line;
}

function readYaml(source: string): Yaml {
  const lines = yamlLines(source);
  const anchors = new Map<string, Yaml>();
  let index = 0;

  const fail = (line: YamlLine | undefined, problem: string): never => {
    throw new Error(
      `YAML line ${line?.number ?? 'end'}: ${problem} (scripts/deployment-files.test.ts ` +
        'reads only a subset of YAML)',
    );
  };
  const isItem = (text: string): boolean => text === '-' || text.startsWith('- ');
  const isMap = (value: Yaml): value is YamlMap =>
    value !== null && typeof value === 'object' && !Array.isArray(value);

  function scalar(text: string, line: YamlLine): Yaml {
    if (text.startsWith('"')) {
      if (!text.endsWith('"') || text.length < 2) fail(line, 'unterminated string');
      return JSON.parse(text) as string;
    }
    if (text.startsWith("'")) {
      if (!text.endsWith("'") || text.length < 2) fail(line, 'unterminated string');
      return text.slice(1, -1).replaceAll("''", "'");
    }
    if (/^[|>&!%@`]/.test(text)) fail(line, `unsupported value ${text}`);
    return text === '~' || text === 'null' ? null : text;
  }

  function flowItems(text: string, line: YamlLine): Yaml[] {
    const inner = text.slice(1, -1).trim();
    if (inner === '') return [];
    const items: string[] = [];
    let quote: string | undefined;
    let current = '';
    for (const char of inner) {
      if (quote !== undefined) {
        if (char === quote) quote = undefined;
      } else if (char === "'" || char === '"') {
        quote = char;
      } else if (char === ',') {
        items.push(current.trim());
        current = '';
        continue;
      } else if ('[]{}'.includes(char)) {
        fail(line, 'nested flow collections are not supported');
      }
      current += char;
    }
    items.push(current.trim());
    return items.map((item) => scalar(item, line));
  }

  function inlineValue(text: string, line: YamlLine): Yaml {
    if (text.startsWith('*')) {
      const value = anchors.get(text.slice(1));
      return value === undefined ? fail(line, `unknown alias ${text}`) : value;
    }
    if (text.startsWith('[')) {
      return text.endsWith(']') ? flowItems(text, line) : fail(line, 'unterminated [');
    }
    if (text === '{}') return {};
    if (text.startsWith('{')) return fail(line, 'flow mappings are not supported');
    return scalar(text, line);
  }

  function nested(parentIndent: number): Yaml {
    const next = lines[index];
    if (next === undefined) return null;
    if (next.indent > parentIndent) return block(next.indent);
    if (next.indent === parentIndent && isItem(next.text)) return sequence(parentIndent);
    return null;
  }

  function block(indent: number): Yaml {
    const first = lines[index];
    if (first === undefined) return null;
    return isItem(first.text) ? sequence(indent) : mapping(indent);
  }

  function sequence(indent: number): Yaml[] {
    const items: Yaml[] = [];
    for (let line = lines[index]; line?.indent === indent && isItem(line.text);) {
      index += 1;
      const rest = line.text.slice(1).trim();
      if (rest === '') items.push(nested(indent));
      else if (/^[^'"[]*?:(\s|$)/.test(rest)) fail(line, 'mappings inside sequences');
      else items.push(inlineValue(rest, line));
      line = lines[index];
    }
    return items;
  }

  function mapping(indent: number): YamlMap {
    const explicit: YamlMap = {};
    let merged: YamlMap = {};
    for (let line = lines[index]; line?.indent === indent; line = lines[index]) {
      if (isItem(line.text)) fail(line, 'a sequence item where a key was expected');
      index += 1;
      const entry = /^(?:'([^']*)'|"([^"]*)"|([^'"\s][^:]*?)):(?:\s+(.*))?$/.exec(line.text);
      if (entry === null) return fail(line, 'expected `key: value`');
      const key = entry[1] ?? entry[2] ?? entry[3] ?? '';
      const anchor = /^&([\w-]+)(?:\s+(.*))?$/.exec(entry[4] ?? '');
      const rest = anchor === null ? (entry[4] ?? '') : (anchor[2] ?? '');
      const value = rest === '' ? nested(indent) : inlineValue(rest, line);
      if (anchor !== null) anchors.set(anchor[1] ?? '', value);
      if (key === '<<') {
        if (!isMap(value)) fail(line, '<< needs a mapping');
        merged = { ...merged, ...(value as YamlMap) };
      } else if (Object.hasOwn(explicit, key)) {
        fail(line, `duplicate key ${key}`);
      } else {
        explicit[key] = value;
      }
    }
    const after = lines[index];
    if (after !== undefined && after.indent > indent) fail(after, 'unexpected indentation');
    // Keys written in the mapping win over merged ones, wherever the `<<` line stands.
    return { ...merged, ...explicit };
  }

  const document = block(0);
  if (index < lines.length) fail(lines[index], 'unexpected indentation');
  return document;
}

function asMap(value: Yaml | undefined, what: string): YamlMap {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${what} is not a mapping`);
  }
  return value;
}

function asList(value: Yaml | undefined, what: string): Yaml[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
}

function asString(value: Yaml | undefined, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what} is not a string`);
  return value;
}

// ---------------------------------------------------------------------------------------
// A reader for the Dockerfile: stages with their base and instructions (continuation
// lines joined, comments dropped).
// ---------------------------------------------------------------------------------------

type Instruction = { keyword: string; args: string };
type Stage = { name: string; from: string; instructions: Instruction[] };

function readDockerfile(source: string): Stage[] {
  const logicalLines: string[] = [];
  let pending = '';
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logicalLines.push(`${pending}${line}`.trim());
    pending = '';
  }
  if (pending !== '') logicalLines.push(pending.trim());

  const stages: Stage[] = [];
  for (const line of logicalLines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const words = args.split(/\s+/).filter((word) => !word.startsWith('--'));
      const named = words.length === 3 && words[1]?.toUpperCase() === 'AS';
      stages.push({
        name: named ? (words[2] ?? '') : String(stages.length),
        from: words[0] ?? '',
        instructions: [],
      });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) {
        if (keyword.toUpperCase() === 'ARG') continue;
        throw new Error(`Dockerfile: ${keyword} before the first FROM`);
      }
      stage.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

/** The stage and the stages it is built on, nearest first. */
function ancestry(stages: readonly Stage[], name: string): Stage[] {
  const chain: Stage[] = [];
  for (let stage = stages.find((s) => s.name === name); stage !== undefined;) {
    chain.push(stage);
    const base = stage.from;
    stage = stages.find((s) => s.name === base);
  }
  return chain;
}

/** The last value an instruction keyword gets along a stage's ancestry. */
function inherited(stages: readonly Stage[], name: string, keyword: string): string | undefined {
  for (const stage of ancestry(stages, name)) {
    const found = stage.instructions.filter((instruction) => instruction.keyword === keyword);
    const last = found.at(-1);
    if (last !== undefined) return last.args;
  }
  return undefined;
}

/** The value an ENV instruction gives `name` along a stage's ancestry (`ENV A=1 B=2` form). */
function inheritedEnv(
  stages: readonly Stage[],
  name: string,
  variable: string,
): string | undefined {
  for (const stage of ancestry(stages, name)) {
    for (const instruction of [...stage.instructions].reverse()) {
      if (instruction.keyword !== 'ENV') continue;
      for (const pair of instruction.args.split(/\s+/)) {
        if (pair.startsWith(`${variable}=`)) return pair.slice(variable.length + 1);
      }
    }
  }
  return undefined;
}

function execForm(args: string, what: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) {
    throw new Error(`${what} is not in exec form`);
  }
  return parsed as string[];
}

// ---------------------------------------------------------------------------------------
// The files under test.
// ---------------------------------------------------------------------------------------

const stages = readDockerfile(readRepoFile('Dockerfile'));
const stageNames = stages.map((stage) => stage.name);
const compose = asMap(readYaml(readRepoFile('docker-compose.yml')), 'docker-compose.yml');
const composeServices = asMap(compose.services, 'services');

type ComposeService = {
  name: string;
  definition: YamlMap;
  target: string | undefined;
  environment: Record<string, string>;
};

function environmentOf(definition: YamlMap, name: string): Record<string, string> {
  const environment = definition.environment;
  if (environment === undefined || environment === null) return {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((item) => {
        const text = asString(item, `${name}.environment item`);
        const equals = text.indexOf('=');
        return equals < 0 ? [text, ''] : [text.slice(0, equals), text.slice(equals + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(asMap(environment, `${name}.environment`)).map(([key, value]) => [
      key,
      value === null ? '' : asString(value, `${name}.environment.${key}`),
    ]),
  );
}

const services: ComposeService[] = Object.entries(composeServices).map(([name, value]) => {
  const definition = asMap(value, `services.${name}`);
  const build = definition.build;
  return {
    name,
    definition,
    target: build === undefined ? undefined : asString(asMap(build, name).target, `${name} target`),
    environment: environmentOf(definition, name),
  };
});
/** The services built from this repository's Dockerfile: the gateway's own processes. */
const gatewayServices = services.filter((service) => service.target !== undefined);
const serviceNamed = (name: string): ComposeService | undefined =>
  services.find((service) => service.name === name);

/** Compose interpolation with the defaults written in the file: `${VAR:-default}`. */
function withComposeDefaults(value: string): string {
  return value.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_match, name: string, fallback) => {
    if (typeof fallback !== 'string') {
      throw new Error(`docker-compose.yml uses \${${name}} without a default`);
    }
    return fallback;
  });
}

/** `services/<x>/dist/<name>.js` of a stage's CMD, with its TypeScript source. */
function entryPoint(stageName: string): { dist: string; source: string } {
  const cmd = inherited(stages, stageName, 'CMD');
  if (cmd === undefined) throw new Error(`stage ${stageName} has no CMD`);
  const [command, dist = '', ...rest] = execForm(cmd, `CMD of ${stageName}`);
  expect({ stage: stageName, command, rest }).toEqual({
    stage: stageName,
    command: 'node',
    rest: [],
  });
  const match = /^(services|packages)\/([^/]+)\/dist\/(.+)\.js$/.exec(dist);
  if (match === null) throw new Error(`CMD of ${stageName} does not run a dist/*.js file`);
  return { dist, source: `${match[1]}/${match[2]}/src/${match[3]}.ts` };
}

/** Variables an entry point refuses to start without, as its source lists them. */
function requiredVariables(source: string): string[] {
  const text = readRepoFile(source);
  const lists = text.matchAll(
    /(?:requiredConfig:|require:|requireConfigValues\(\s*config,)\s*\[([^\]]*)\]/g,
  );
  return [...lists].flatMap((list) =>
    [...(list[1] ?? '').matchAll(/'([A-Z0-9_]+)'/g)].map((name) => name[1] ?? ''),
  );
}

/** Workspace project folders from pnpm-workspace.yaml (globs of the form `dir/*`). */
function workspaceProjects(): string[] {
  const workspace = asMap(readYaml(readRepoFile('pnpm-workspace.yaml')), 'pnpm-workspace.yaml');
  return asList(workspace.packages, 'packages').flatMap((pattern) => {
    const glob = asString(pattern, 'workspace pattern');
    if (!glob.endsWith('/*') || glob.slice(0, -2).includes('*')) {
      throw new Error(`workspace pattern ${glob} is not of the form dir/*`);
    }
    const dir = glob.slice(0, -2);
    return readdirSync(join(root, dir), { withFileTypes: true })
      .filter(
        (entry) => entry.isDirectory() && existsSync(join(root, dir, entry.name, 'package.json')),
      )
      .map((entry) => `${dir}/${entry.name}`);
  });
}

type Manifest = { name: string; dependencies?: Record<string, string>; packageManager?: string };
const manifestOf = (dir: string): Manifest =>
  JSON.parse(readRepoFile(join(dir, 'package.json'))) as Manifest;

const instructionsOf = (stageName: string): Instruction[] =>
  stages.find((stage) => stage.name === stageName)?.instructions ?? [];

/** Workspace projects left out of the production install (`--filter '!name'`). */
function excludedFromProductionInstall(): string[] {
  const install = instructionsOf('prod-deps').find((i) => i.args.includes('pnpm install'));
  return [...(install?.args ?? '').matchAll(/--filter\s+'!([^']+)'/g)].map((m) => m[1] ?? '');
}

type RuntimeImport = { file: string; project: string; specifier: string };

/**
 * Every module specifier the code of `entries` loads, following relative imports and
 * workspace packages (through their src/index.ts) from the entry points. `import type`
 * and `export type` are erased by the compiler and skipped.
 */
function runtimeImports(entries: readonly string[]): RuntimeImport[] {
  const projects = workspaceProjects();
  const projectByName = new Map(projects.map((dir) => [manifestOf(dir).name, dir]));
  const projectOf = (file: string): string =>
    projects.find((dir) => file.startsWith(`${dir}/`)) ?? raise(`${file} is in no project`);
  const seen = new Set<string>();
  const found: RuntimeImport[] = [];
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readRepoFile(file);
    const specifiers = [
      ...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+'([^']+)'/gm),
      ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
      ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
    ].map((match) => match[1] ?? '');
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) {
        queue.push(join(file, '..', specifier).replace(/\.js$/, '.ts'));
        continue;
      }
      if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      const project = projectOf(file);
      found.push({ file, project, specifier });
      const workspaceDir = projectByName.get(packageName(specifier));
      if (workspaceDir !== undefined) queue.push(`${workspaceDir}/src/index.ts`);
    }
  }
  return found;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
}

function raise(message: string): never {
  throw new Error(message);
}

const runtimeTargets = stages
  .filter((stage) => stage.instructions.some((instruction) => instruction.keyword === 'CMD'))
  .map((stage) => stage.name);

// ---------------------------------------------------------------------------------------

describe('the YAML reader of this test', () => {
  it('resolves anchors and merge keys, the written keys winning', () => {
    const parsed = readYaml(
      [
        'x-base: &base',
        '  A: "1"',
        '  B: two # comment',
        'one:',
        '  <<: *base',
        "  B: 'three'",
        '  list: [x, "y, z"]',
        '  items:',
        '    - a',
        '    - b',
        '  empty:',
      ].join('\n'),
    );
    expect(asMap(parsed, 'document').one).toEqual({
      A: '1',
      B: 'three',
      list: ['x', 'y, z'],
      items: ['a', 'b'],
      empty: null,
    });
  });

  it('refuses YAML it does not understand', () => {
    expect(() => readYaml('a: |\n  text')).toThrow('line 1');
    expect(() => readYaml('a:\n  - b: c')).toThrow('mappings inside sequences');
  });
});

describe('Dockerfile', () => {
  it('builds on node:20-bookworm-slim with the pnpm of packageManager', () => {
    for (const stage of stages.filter((s) => !stageNames.includes(s.from))) {
      expect({ stage: stage.name, from: stage.from }).toEqual({
        stage: stage.name,
        from: 'node:20-bookworm-slim',
      });
    }
    const packageManager = manifestOf('.').packageManager ?? '';
    const corepack = instructionsOf('base').find((i) => i.args.includes('corepack prepare'));
    expect(corepack?.args).toContain(`corepack prepare ${packageManager} --activate`);
  });

  it('copies every workspace manifest before installing', () => {
    const copied = instructionsOf('manifests')
      .filter((instruction) => instruction.keyword === 'COPY')
      .flatMap((instruction) => instruction.args.split(/\s+/).slice(0, -1));
    const expected = [
      'package.json',
      'pnpm-lock.yaml',
      'pnpm-workspace.yaml',
      ...workspaceProjects().map((dir) => `${dir}/package.json`),
    ];
    expect([...copied].sort()).toEqual([...expected].sort());
    for (const stage of ['deps', 'prod-deps']) {
      expect(ancestry(stages, stage).map((s) => s.name)).toContain('manifests');
      const install = instructionsOf(stage).find((i) => i.args.includes('pnpm install'));
      expect(install?.args).toContain('--frozen-lockfile');
    }
    expect(instructionsOf('prod-deps').find((i) => i.keyword === 'RUN')?.args).toContain('--prod');
  });

  it('ships the dist of every package the production install keeps', () => {
    const excluded = excludedFromProductionInstall();
    expect(excluded).toEqual(['@gateway/testkit']);
    const shipped = workspaceProjects().filter((dir) => !excluded.includes(manifestOf(dir).name));
    const copiedDists = instructionsOf('app')
      .filter((instruction) => instruction.args.startsWith('--from=build '))
      .map((instruction) => instruction.args.split(/\s+/).slice(1))
      .filter(([from]) => from?.endsWith('/dist'));
    expect(copiedDists.sort()).toEqual(
      shipped.map((dir) => [`/app/${dir}/dist`, `${dir}/dist`]).sort(),
    );
    expect(ancestry(stages, 'runtime').map((s) => s.name)).toEqual(['runtime']);
    const runtimeCopies = instructionsOf('runtime').filter((i) => i.keyword === 'COPY');
    expect(runtimeCopies.map((i) => i.args)).toEqual(['--from=app /app /app']);
  });

  it('ships the demo accounts the embedded default reads', () => {
    const copies = instructionsOf('app').map((instruction) => instruction.args);
    expect(copies).toContain(
      '--from=build /app/services/dev-identity/seed-accounts.json services/dev-identity/',
    );
  });

  it('installs everything the entry points load as production dependencies', () => {
    const excluded = excludedFromProductionInstall();
    const imports = runtimeImports(runtimeTargets.map((target) => entryPoint(target).source));
    // The walk crosses package boundaries: the edge's, the database's and auth-flow's imports.
    expect(imports.map((found) => found.specifier)).toEqual(
      expect.arrayContaining(['express', '@gateway/db', 'pg', 'ioredis']),
    );
    for (const { file, project, specifier } of imports) {
      const manifest = manifestOf(project);
      const name = packageName(specifier);
      const declared = name === manifest.name || name in (manifest.dependencies ?? {});
      const installed = declared && !excluded.includes(name);
      expect({ file, specifier, installed }).toEqual({ file, specifier, installed: true });
    }
  });

  it('runs every target as the node user in production mode', () => {
    expect(instructionsOf('runtime').filter((i) => i.keyword === 'USER')).toEqual([
      { keyword: 'USER', args: 'node' },
    ]);
    expect(instructionsOf('runtime')).toContainEqual({
      keyword: 'ENV',
      args: 'NODE_ENV=production',
    });
    expect(runtimeTargets.length).toBeGreaterThanOrEqual(5);
    for (const target of runtimeTargets) {
      expect({ target, chain: ancestry(stages, target).map((s) => s.name) }).toEqual({
        target,
        chain: expect.arrayContaining(['runtime']),
      });
      expect({ target, user: inherited(stages, target, 'USER') }).toEqual({ target, user: 'node' });
    }
  });

  it('has the named targets, each starting a compiled entry point that has a source', () => {
    expect(runtimeTargets).toEqual(
      expect.arrayContaining(['edge', 'registry', 'auth-flow', 'onboarding', 'gateway']),
    );
    expect(stages.at(-1)?.name).toBe('gateway');
    for (const target of runtimeTargets) {
      const { source } = entryPoint(target);
      expect({ target, source, exists: existsSync(join(root, source)) }).toEqual({
        target,
        source,
        exists: true,
      });
    }
  });

  it('gives every target a health check', () => {
    for (const target of runtimeTargets) {
      const healthcheck = inherited(stages, target, 'HEALTHCHECK') ?? '';
      const command = execForm(healthcheck.slice(healthcheck.indexOf('CMD ') + 4), target);
      expect({ target, runs: command.slice(0, 2) }).toEqual({ target, runs: ['node', '-e'] });
      const probe = command[2] ?? '';
      expect(probe).toMatch(
        target === 'registry' || target === 'auth-flow' || target === 'onboarding'
          ? /grpc\.health\.v1\.Health\/Check/
          : /\/health\/live/,
      );
    }
  });
});

describe('docker-compose.yml', () => {
  it('builds the gateway services from Dockerfile targets that exist', () => {
    expect(gatewayServices.map((service) => service.name).sort()).toEqual(
      ['auth-flow', 'edge', 'onboarding', 'registry'].sort(),
    );
    for (const service of gatewayServices) {
      const build = asMap(service.definition.build, `${service.name}.build`);
      expect({
        service: service.name,
        context: build.context,
        dockerfile: build.dockerfile,
      }).toEqual({ service: service.name, context: '.', dockerfile: 'Dockerfile' });
      expect(stageNames).toContain(service.target);
      expect(runtimeTargets).toContain(service.target);
    }
  });

  it('sets only known configuration variables on the gateway services', () => {
    const known = new Set<string>(configVariables.map((variable) => variable.name));
    for (const service of gatewayServices) {
      for (const name of Object.keys(service.environment)) {
        expect({
          service: service.name,
          name,
          known: known.has(name) || name.startsWith('OTEL_'),
        }).toEqual({ service: service.name, name, known: true });
      }
    }
  });

  it('gives each gateway service a configuration its process accepts', () => {
    for (const service of gatewayServices) {
      const env = Object.fromEntries(
        Object.entries(service.environment).map(([key, value]) => [
          key,
          withComposeDefaults(value),
        ]),
      );
      const config = loadConfig(env);
      const required = requiredVariables(entryPoint(service.target ?? '').source);
      expect(required.length).toBeGreaterThan(0);
      expect(() => requireConfigValues(config, required)).not.toThrow();
      // The Dockerfile's target listens on the port compose gives it.
      expect({ service: service.name, port: config.port }).toEqual({
        service: service.name,
        port: Number(inheritedEnv(stages, service.target ?? '', 'PORT')),
      });
    }
  });

  it('points the edge at the three services on the ports they listen on', () => {
    const edge = serviceNamed('edge');
    const urls = {
      REGISTRY_SERVICE_URL: 'registry',
      AUTH_FLOW_SERVICE_URL: 'auth-flow',
      ONBOARDING_SERVICE_URL: 'onboarding',
    };
    for (const [variable, target] of Object.entries(urls)) {
      const url = new URL(edge?.environment[variable] ?? 'missing:');
      const service = serviceNamed(url.hostname);
      expect({ variable, protocol: url.protocol, target: service?.target }).toEqual({
        variable,
        protocol: 'http:',
        target,
      });
      expect({ variable, port: url.port }).toEqual({ variable, port: service?.environment.PORT });
    }
  });

  it('publishes the edge port and starts services once their dependencies are healthy', () => {
    const edge = serviceNamed('edge');
    const port = edge?.environment.PORT ?? '';
    expect(asList(edge?.definition.ports, 'edge.ports')).toContain(`${port}:${port}`);
    for (const service of gatewayServices) {
      const dependsOn = asMap(service.definition.depends_on, `${service.name}.depends_on`);
      for (const [dependency, value] of Object.entries(dependsOn)) {
        expect({
          service: service.name,
          dependency,
          condition: asMap(value, dependency).condition,
        }).toEqual({ service: service.name, dependency, condition: 'service_healthy' });
        const other = serviceNamed(dependency);
        const checked =
          other?.definition.healthcheck !== undefined ||
          (other?.target !== undefined &&
            inherited(stages, other.target, 'HEALTHCHECK') !== undefined);
        expect({ dependency, checked }).toEqual({ dependency, checked: true });
      }
    }
    const needs = (name: string) =>
      Object.keys(asMap(serviceNamed(name)?.definition.depends_on, name));
    expect(needs('edge').sort()).toEqual(['auth-flow', 'onboarding', 'registry']);
    // auth-flow calls the registry and onboarding services (login preparation, evaluation).
    expect(needs('auth-flow').sort()).toEqual(['onboarding', 'postgres', 'redis', 'registry']);
  });

  it('runs Redis with its append-only file synced every second on a volume, and auth-flow requires it', () => {
    const redis = serviceNamed('redis');
    const command = asList(redis?.definition.command, 'redis command').map((part) =>
      asString(part, 'redis command part'),
    );
    expect(command[0]).toBe('redis-server');
    const setting = (name: string) => command[command.indexOf(`--${name}`) + 1];
    expect({ appendonly: setting('appendonly'), appendfsync: setting('appendfsync') }).toEqual({
      appendonly: 'yes',
      appendfsync: 'everysec',
    });
    // The official image's data folder (where the AOF goes) is a named volume.
    const mounts = asList(redis?.definition.volumes, 'redis volumes').map((volume) =>
      asString(volume, 'redis volume').split(':'),
    );
    const data = mounts.find(([, target]) => target === '/data');
    expect(data?.[0]).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(Object.keys(asMap(compose.volumes, 'volumes'))).toContain(data?.[0]);
    const authFlow = serviceNamed('auth-flow');
    expect(new URL(authFlow?.environment.REDIS_URL ?? 'missing:').hostname).toBe('redis');
    const env = Object.fromEntries(
      Object.entries(authFlow?.environment ?? {}).map(([key, value]) => [
        key,
        withComposeDefaults(value),
      ]),
    );
    expect(loadConfig(env).redisRequirePersistence).toBe(true);
  });

  it('sends every trace to the collector, which forwards it to Jaeger', () => {
    const endpoints = new Set(
      gatewayServices.map((service) => service.environment.OTEL_EXPORTER_OTLP_ENDPOINT),
    );
    expect(endpoints.size).toBe(1);
    const endpoint = new URL([...endpoints][0] ?? 'missing:');
    const collector = serviceNamed(endpoint.hostname);
    const mount = asList(collector?.definition.volumes, 'collector volumes')
      .map((volume) => asString(volume, 'volume').split(':'))
      .find(([source]) => source?.startsWith('./'));
    const configFile = mount?.[0] ?? '';
    expect(existsSync(join(root, configFile))).toBe(true);
    const command = asList(collector?.definition.command, 'collector command');
    expect(command).toContain(`--config=${mount?.[1] ?? ''}`);

    const config = asMap(readYaml(readRepoFile(configFile)), configFile);
    const http = asMap(
      asMap(asMap(asMap(config.receivers, 'receivers').otlp, 'otlp').protocols, 'protocols').http,
      'http',
    );
    expect(asString(http.endpoint, 'http endpoint')).toBe(`0.0.0.0:${endpoint.port}`);
    const pipeline = asMap(
      asMap(asMap(config.service, 'service').pipelines, 'pipelines').traces,
      'traces',
    );
    const exporters = asMap(config.exporters, 'exporters');
    for (const name of asList(pipeline.exporters, 'pipeline exporters')) {
      const exporter = asMap(exporters[asString(name, 'exporter')], `exporter ${String(name)}`);
      const [host] = asString(exporter.endpoint, 'exporter endpoint').split(':');
      expect(serviceNamed(host ?? '')?.definition.image).toMatch(/^jaegertracing\//);
    }
    expect(asList(serviceNamed('jaeger')?.definition.ports, 'jaeger ports')).toContain(
      '16686:16686',
    );
  });
});
