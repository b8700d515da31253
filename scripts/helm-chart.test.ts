import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import {
  configVariables,
  derivedConfigFields,
  loadConfig,
  LOG_LEVELS,
  NODE_ENVS,
  requireConfigValues,
} from '@gateway/config';

// The Helm chart under deploy/helm/gateway cannot be rendered with helm here (no binary), so
// this file renders it with a small renderer of the template language subset the chart
// uses, validates values against values.schema.json with Ajv, and checks the resulting
// Kubernetes objects against the code: configuration variables, secrets per process, ports,
// probes, who calls whom (NetworkPolicies), the migration entry point.

const root = fileURLToPath(new URL('..', import.meta.url));
const chartDir = join(root, 'deploy/helm/gateway');
const readRepoFile = (path: string): string => readFileSync(join(root, path), 'utf8');

// ---------------------------------------------------------------------------------------
// A renderer for the subset of Helm's template language (Go text/template plus the Sprig
// functions below) that the chart uses. It follows Go's rules for what it supports: `{{-`
// and `-}}` trim whitespace; `if`/`else if`/`else`, `with`, `range` (lists by index, maps by
// sorted key, with `$k, $v :=`), `define` and `include`; `$x :=` and `$x =` scoped to the
// enclosing block; a missing map key is empty, but a field of an empty value is an error;
// empty values (nil, false, 0, "", empty lists and maps) are false. Anything else, a
// function not listed below, a number that is not a small integer or a map printed without
// toYaml, is an error here rather than a guess, so the chart must stay inside this subset
// (or the renderer grows, with a test of its own below).
// ---------------------------------------------------------------------------------------

type Data = unknown;
type DataMap = { [key: string]: Data };
type Operand =
  | { kind: 'dot'; path: string[] }
  | { kind: 'variable'; name: string; path: string[] }
  | { kind: 'literal'; value: Data }
  | { kind: 'function'; name: string }
  | { kind: 'pipeline'; pipeline: Pipeline };
type Command = Operand[];
type Pipeline = Command[];
type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'print'; pipeline: Pipeline }
  | { kind: 'assign'; name: string; declare: boolean; pipeline: Pipeline }
  | {
      kind: 'if';
      branches: { pipeline: Pipeline; body: TemplateNode[] }[];
      otherwise: TemplateNode[];
    }
  | { kind: 'with'; pipeline: Pipeline; body: TemplateNode[]; otherwise: TemplateNode[] }
  | {
      kind: 'range';
      variables: string[];
      pipeline: Pipeline;
      body: TemplateNode[];
      otherwise: TemplateNode[];
    };
type Token = {
  kind: 'string' | 'number' | 'constant' | 'field' | 'variable' | 'identifier' | 'punctuation';
  text: string;
  value?: Data;
  /** Whether whitespace precedes it: `(x).y` is a field of (x), `(x) .y` an argument. */
  spaced: boolean;
};
type Piece = { kind: 'text'; text: string } | { kind: 'action'; source: string; where: string };

const FUNCTIONS = new Set([
  'contains',
  'default',
  'dict',
  'eq',
  'fail',
  'get',
  'include',
  'int64',
  'kindIs',
  'list',
  'nindent',
  'not',
  'or',
  'print',
  'printf',
  'quote',
  'replace',
  'required',
  'sha256sum',
  'toString',
  'toYaml',
  'trimSuffix',
  'trunc',
]);

const isMap = (value: Data): value is DataMap =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function truthy(value: Data): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

/**
 * Go's %v of what templates hold. Helm reads the numbers of values files as float64, which
 * print as 1e+06 from one million on, so only smaller integers are accepted; int64 (the
 * result of the int64 function, a bigint here) prints in full.
 */
function goString(value: Data, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
    throw new Error(`${where}: the renderer prints only integers below 1e6, not ${value}`);
  }
  throw new Error(`${where}: cannot print ${JSON.stringify(value)} (use toYaml)`);
}

/** Splits a template into text and the source of its actions, applying `{{-` and `-}}`. */
function splitActions(source: string, file: string): Piece[] {
  const pieces: Piece[] = [];
  let position = 0;
  let trimStart = false;
  while (position < source.length) {
    const open = source.indexOf('{{', position);
    let text = source.slice(position, open < 0 ? source.length : open);
    if (trimStart) text = text.replace(/^\s+/, '');
    if (open < 0) {
      pieces.push({ kind: 'text', text });
      break;
    }
    let start = open + 2;
    if (source[start] === '-' && /\s/.test(source[start + 1] ?? '')) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    if (text !== '') pieces.push({ kind: 'text', text });
    const close = closingBraces(source, start, file);
    const trimEnd = source[close - 1] === '-' && /\s/.test(source[close - 2] ?? '');
    const where = `${file}:${source.slice(0, open).split('\n').length}`;
    pieces.push({
      kind: 'action',
      source: source.slice(start, trimEnd ? close - 1 : close).trim(),
      where,
    });
    trimStart = trimEnd;
    position = close + 2;
  }
  return pieces;
}

function closingBraces(source: string, start: number, file: string): number {
  for (let i = start; i < source.length; i += 1) {
    const char = source[i];
    if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) break;
      i = end + 1;
    } else if (char === '"') {
      for (i += 1; i < source.length && source[i] !== '"'; i += 1) if (source[i] === '\\') i += 1;
    } else if (char === '`') {
      i = source.indexOf('`', i + 1);
      if (i < 0) break;
    } else if (source.startsWith('}}', i)) {
      return i;
    }
  }
  throw new Error(`${file}: unclosed {{`);
}

function tokenize(action: string, where: string): Token[] {
  const tokens: Token[] = [];
  const patterns: [Token['kind'], RegExp][] = [
    ['string', /^"(?:[^"\\]|\\.)*"/],
    ['string', /^`[^`]*`/],
    ['number', /^-?\d+(?:\.\d+)?(?![\w.])/],
    ['punctuation', /^(?::=|[=|(),])/],
    ['variable', /^\$\w*(?:\.[A-Za-z_]\w*)*/],
    ['field', /^(?:\.[A-Za-z_]\w*)+|^\.(?![\w.])/],
    ['identifier', /^[A-Za-z_]\w*/],
  ];
  for (let rest = action.trim(), spaced = false; rest !== '';) {
    const found = patterns
      .map(([kind, pattern]) => ({ kind, match: pattern.exec(rest) }))
      .find((candidate) => candidate.match !== null);
    const text = found?.match?.[0];
    if (found === undefined || text === undefined) {
      throw new Error(`${where}: cannot read \`${rest}\``);
    }
    rest = rest.slice(text.length);
    if (found.kind === 'string') {
      if (/\\[^"\\nt]/.test(text)) throw new Error(`${where}: unsupported escape in ${text}`);
      const value = text.startsWith('`') ? text.slice(1, -1) : (JSON.parse(text) as string);
      tokens.push({ kind: 'string', text, value, spaced });
    } else if (found.kind === 'number') {
      tokens.push({ kind: 'number', text, value: Number(text), spaced });
    } else if (found.kind === 'identifier' && ['true', 'false', 'nil'].includes(text)) {
      const value = text === 'nil' ? null : text === 'true';
      tokens.push({ kind: 'constant', text, value, spaced });
    } else {
      tokens.push({ kind: found.kind, text, spaced });
    }
    spaced = /^\s/.test(rest);
    rest = rest.trimStart();
  }
  return tokens;
}

function parsePipeline(tokens: Token[], where: string): Pipeline {
  let index = 0;
  const operand = (token: Token): Operand => {
    switch (token.kind) {
      case 'string':
      case 'number':
      case 'constant':
        return { kind: 'literal', value: token.value };
      case 'field':
        return { kind: 'dot', path: token.text === '.' ? [] : token.text.slice(1).split('.') };
      case 'variable': {
        const [name = '$', ...path] = token.text.split('.');
        return { kind: 'variable', name, path };
      }
      case 'identifier':
        if (!FUNCTIONS.has(token.text)) {
          throw new Error(`${where}: function ${token.text} is not supported by this renderer`);
        }
        return { kind: 'function', name: token.text };
      default:
        throw new Error(`${where}: unexpected ${token.text}`);
    }
  };
  const pipeline = (nested: boolean): Pipeline => {
    const commands: Pipeline = [[]];
    while (index < tokens.length) {
      const token = tokens[index] as Token;
      if (token.text === ')' && token.kind === 'punctuation') {
        if (!nested) throw new Error(`${where}: unexpected )`);
        break;
      }
      index += 1;
      if (token.kind === 'punctuation' && token.text === '|') {
        commands.push([]);
      } else if (token.kind === 'punctuation' && token.text === '(') {
        const inner = pipeline(true);
        if (tokens[index]?.text !== ')') throw new Error(`${where}: unclosed (`);
        index += 1;
        const next = tokens[index];
        if (next?.kind === 'field' && !next.spaced) {
          throw new Error(`${where}: fields of a parenthesized value are not supported`);
        }
        commands.at(-1)?.push({ kind: 'pipeline', pipeline: inner });
      } else {
        commands.at(-1)?.push(operand(token));
      }
    }
    if (commands.some((command) => command.length === 0)) {
      throw new Error(`${where}: empty command in a pipeline`);
    }
    return commands;
  };
  const result = pipeline(false);
  if (index !== tokens.length) throw new Error(`${where}: unexpected ${tokens[index]?.text}`);
  return result;
}

/** Parses one template file; its `define`s go into `defines`. */
function parseTemplate(
  source: string,
  file: string,
  defines: Map<string, TemplateNode[]>,
): TemplateNode[] {
  const pieces = splitActions(source, file);
  let index = 0;
  type Part = {
    nodes: TemplateNode[];
    stop: 'end' | 'else' | 'eof';
    elseTokens: Token[];
    where: string;
  };

  const list = (): Part => {
    const nodes: TemplateNode[] = [];
    while (index < pieces.length) {
      const piece = pieces[index] as Piece;
      index += 1;
      if (piece.kind === 'text') {
        nodes.push({ kind: 'text', text: piece.text });
        continue;
      }
      const { source: action, where } = piece;
      if (action.startsWith('/*')) {
        if (!action.endsWith('*/')) throw new Error(`${where}: a comment must end the action`);
        continue;
      }
      const tokens = tokenize(action, where);
      const keyword = tokens[0]?.kind === 'identifier' ? tokens[0].text : undefined;
      const rest = tokens.slice(1);
      if (keyword === 'end') return { nodes, stop: 'end', elseTokens: [], where };
      if (keyword === 'else') return { nodes, stop: 'else', elseTokens: rest, where };
      if (keyword === 'if') nodes.push(ifNode(rest, where));
      else if (keyword === 'with') nodes.push(withNode(rest, where));
      else if (keyword === 'range') nodes.push(rangeNode(rest, where));
      else if (keyword === 'define') defineTemplate(rest, where);
      else if (['template', 'block', 'break', 'continue'].includes(keyword ?? '')) {
        throw new Error(`${where}: ${keyword} is not supported by this renderer`);
      } else if (tokens[0]?.kind === 'variable' && [':=', '='].includes(tokens[1]?.text ?? '')) {
        nodes.push({
          kind: 'assign',
          name: tokens[0].text,
          declare: tokens[1]?.text === ':=',
          pipeline: parsePipeline(tokens.slice(2), where),
        });
      } else {
        nodes.push({ kind: 'print', pipeline: parsePipeline(tokens, where) });
      }
    }
    return { nodes, stop: 'eof', elseTokens: [], where: file };
  };
  const untilEnd = (where: string): TemplateNode[] => {
    const part = list();
    if (part.stop !== 'end') throw new Error(`${where}: missing {{ end }}`);
    return part.nodes;
  };
  const bodyAndOtherwise = (where: string) => {
    const body = list();
    if (body.stop === 'eof') throw new Error(`${where}: missing {{ end }}`);
    if (body.stop === 'end') return { body: body.nodes, otherwise: [] };
    if (body.elseTokens.length > 0) throw new Error(`${body.where}: else-with is not supported`);
    return { body: body.nodes, otherwise: untilEnd(where) };
  };
  const ifNode = (tokens: Token[], where: string): TemplateNode => {
    const branches = [{ pipeline: parsePipeline(tokens, where), body: [] as TemplateNode[] }];
    let otherwise: TemplateNode[] = [];
    for (;;) {
      const part = list();
      (branches.at(-1) as (typeof branches)[number]).body = part.nodes;
      if (part.stop === 'end') break;
      if (part.stop === 'eof') throw new Error(`${where}: missing {{ end }}`);
      if (part.elseTokens[0]?.text === 'if') {
        branches.push({ pipeline: parsePipeline(part.elseTokens.slice(1), part.where), body: [] });
        continue;
      }
      if (part.elseTokens.length > 0) throw new Error(`${part.where}: unsupported else form`);
      otherwise = untilEnd(where);
      break;
    }
    return { kind: 'if', branches, otherwise };
  };
  const withNode = (tokens: Token[], where: string): TemplateNode => ({
    kind: 'with',
    pipeline: parsePipeline(tokens, where),
    ...bodyAndOtherwise(where),
  });
  const rangeNode = (tokens: Token[], where: string): TemplateNode => {
    const declaration = tokens.findIndex((token) => token.text === ':=');
    const variables =
      declaration < 0
        ? []
        : tokens
            .slice(0, declaration)
            .filter((token) => token.text !== ',')
            .map((token) => {
              if (token.kind !== 'variable') throw new Error(`${where}: bad range variable`);
              return token.text;
            });
    if (variables.length > 2) throw new Error(`${where}: too many range variables`);
    const pipeline = parsePipeline(tokens.slice(declaration + 1), where);
    return { kind: 'range', variables, pipeline, ...bodyAndOtherwise(where) };
  };
  const defineTemplate = (tokens: Token[], where: string): void => {
    const [name] = tokens;
    if (tokens.length !== 1 || name?.kind !== 'string') throw new Error(`${where}: bad define`);
    defines.set(String(name.value), untilEnd(where));
  };

  const top = list();
  if (top.stop !== 'eof') throw new Error(`${top.where}: unexpected {{ ${top.stop} }}`);
  return top.nodes;
}

class Scope {
  private readonly variables = new Map<string, Data>();
  constructor(private readonly parent?: Scope) {}
  declare(name: string, value: Data): void {
    this.variables.set(name, value);
  }
  assign(name: string, value: Data): void {
    if (this.variables.has(name)) this.variables.set(name, value);
    else if (this.parent !== undefined) this.parent.assign(name, value);
    else throw new Error(`undefined variable ${name}`);
  }
  lookup(name: string): Data {
    if (this.variables.has(name)) return this.variables.get(name);
    if (this.parent !== undefined) return this.parent.lookup(name);
    throw new Error(`undefined variable ${name}`);
  }
}

class RenderError extends Error {}

class TemplateRenderer {
  readonly defines = new Map<string, TemplateNode[]>();
  /** Dotted paths of every value the templates read from the tracked values (`edge.port`). */
  readonly valuesRead = new Set<string>();
  private readonly trackedPaths = new WeakMap<object, string>();

  constructor(templates: Record<string, string>) {
    for (const [name, source] of Object.entries(templates)) {
      this.defines.set(name, parseTemplate(source, name, this.defines));
    }
  }

  /** Remembers where each map and list of `values` sits, so field reads can be recorded. */
  track(values: Data, path = ''): void {
    if (isMap(values)) {
      this.trackedPaths.set(values, path);
      for (const [key, value] of Object.entries(values)) {
        this.track(value, path === '' ? key : `${path}.${key}`);
      }
    } else if (Array.isArray(values)) {
      this.trackedPaths.set(values, path);
      for (const item of values) this.track(item, `${path}[]`);
    }
  }

  render(name: string, data: Data): string {
    const nodes = this.defines.get(name);
    if (nodes === undefined) throw new RenderError(`no template named ${name}`);
    const scope = new Scope();
    scope.declare('$', data);
    const out: string[] = [];
    this.run(nodes, data, scope, out, name);
    return out.join('');
  }

  private run(nodes: TemplateNode[], dot: Data, scope: Scope, out: string[], where: string): void {
    for (const node of nodes) {
      switch (node.kind) {
        case 'text':
          out.push(node.text);
          break;
        case 'print': {
          const value = this.pipeline(node.pipeline, dot, scope, where);
          out.push(value === null || value === undefined ? '' : goString(value, where));
          break;
        }
        case 'assign': {
          const value = this.pipeline(node.pipeline, dot, scope, where);
          if (node.declare) scope.declare(node.name, value);
          else scope.assign(node.name, value);
          break;
        }
        case 'if': {
          const branch = node.branches.find((candidate) =>
            truthy(this.pipeline(candidate.pipeline, dot, scope, where)),
          );
          this.run(branch?.body ?? node.otherwise, dot, new Scope(scope), out, where);
          break;
        }
        case 'with': {
          const value = this.pipeline(node.pipeline, dot, scope, where);
          if (truthy(value)) this.run(node.body, value, new Scope(scope), out, where);
          else this.run(node.otherwise, dot, new Scope(scope), out, where);
          break;
        }
        case 'range': {
          const value = this.pipeline(node.pipeline, dot, scope, where);
          let entries: [Data, Data][];
          if (Array.isArray(value)) entries = value.map((item, i) => [i, item]);
          else if (isMap(value))
            entries = Object.keys(value)
              .sort()
              .map((key) => [key, value[key]]);
          else if (value === null || value === undefined) entries = [];
          else throw new RenderError(`${where}: range over ${typeof value}`);
          if (entries.length === 0) this.run(node.otherwise, dot, new Scope(scope), out, where);
          for (const [key, item] of entries) {
            const inner = new Scope(scope);
            const [first, second] = node.variables;
            if (first !== undefined && second === undefined) inner.declare(first, item);
            if (first !== undefined && second !== undefined) {
              inner.declare(first, key);
              inner.declare(second, item);
            }
            this.run(node.body, item, inner, out, where);
          }
          break;
        }
      }
    }
  }

  private pipeline(pipeline: Pipeline, dot: Data, scope: Scope, where: string): Data {
    let value: Data;
    pipeline.forEach((command, position) => {
      const piped = position === 0 ? [] : [value];
      const [head, ...args] = command as [Operand, ...Operand[]];
      if (head.kind === 'function') {
        value = this.call(head.name, args, piped, dot, scope, where);
      } else if (args.length > 0 || piped.length > 0) {
        throw new RenderError(`${where}: arguments given to a value that is not a function`);
      } else {
        value = this.operand(head, dot, scope, where);
      }
    });
    return value;
  }

  private operand(operand: Operand, dot: Data, scope: Scope, where: string): Data {
    switch (operand.kind) {
      case 'literal':
        return operand.value;
      case 'dot':
        return this.walk(dot, operand.path, where);
      case 'variable':
        return this.walk(scope.lookup(operand.name), operand.path, where);
      case 'function':
        return this.call(operand.name, [], [], dot, scope, where);
      case 'pipeline':
        return this.pipeline(operand.pipeline, dot, scope, where);
    }
  }

  private walk(value: Data, path: string[], where: string): Data {
    let current = value;
    for (const name of path) {
      if (current === null || current === undefined) {
        throw new RenderError(`${where}: nil pointer evaluating .${name}`);
      }
      if (!isMap(current)) throw new RenderError(`${where}: can't evaluate field ${name}`);
      this.noteRead(current, name);
      current = Object.hasOwn(current, name) ? current[name] : undefined;
    }
    return current;
  }

  private noteRead(map: DataMap, key: string): void {
    const path = this.trackedPaths.get(map);
    if (path !== undefined) this.valuesRead.add(path === '' ? key : `${path}.${key}`);
  }

  private call(
    name: string,
    args: Operand[],
    piped: Data[],
    dot: Data,
    scope: Scope,
    where: string,
  ): Data {
    const lazy = [
      ...args.map((arg) => () => this.operand(arg, dot, scope, where)),
      ...piped.map((value) => () => value),
    ];
    if (name === 'or') {
      let value: Data;
      for (const next of lazy) {
        value = next();
        if (truthy(value)) return value;
      }
      return value;
    }
    const values = lazy.map((next) => next());
    const text = (value: Data): string => {
      if (typeof value !== 'string') throw new RenderError(`${where}: ${name} needs a string`);
      return value;
    };
    const count = (n: number) => {
      if (values.length !== n) throw new RenderError(`${where}: ${name} takes ${n} arguments`);
    };
    switch (name) {
      case 'include':
        count(2);
        return this.render(text(values[0]), values[1]);
      case 'required':
        count(2);
        if (values[1] === null || values[1] === undefined || values[1] === '') {
          throw new RenderError(`${where}: ${text(values[0])}`);
        }
        return values[1];
      case 'default':
        if (values.length === 1) return values[0];
        count(2);
        return truthy(values[1]) ? values[1] : values[0];
      case 'dict': {
        if (values.length % 2 !== 0) throw new RenderError(`${where}: dict needs key-value pairs`);
        const map: DataMap = {};
        for (let i = 0; i < values.length; i += 2) map[text(values[i])] = values[i + 1];
        return map;
      }
      case 'list':
        return values;
      case 'eq': {
        // Go's eq: the first argument equals any of the others; basic values of one kind only.
        if (values.length < 2) throw new RenderError(`${where}: eq needs two arguments or more`);
        const [first, ...others] = values;
        for (const value of values) {
          if (!['string', 'number', 'boolean', 'bigint'].includes(typeof value)) {
            throw new RenderError(`${where}: eq of a non-basic value`);
          }
          if (typeof value !== typeof first) {
            throw new RenderError(`${where}: eq of incompatible types`);
          }
        }
        return others.some((value) => value === first);
      }
      case 'fail':
        count(1);
        throw new RenderError(`${where}: ${text(values[0])}`);
      case 'get': {
        count(2);
        const [map, key] = values;
        if (!isMap(map)) throw new RenderError(`${where}: get needs a map`);
        this.noteRead(map, text(key));
        return Object.hasOwn(map, text(key)) ? map[text(key)] : '';
      }
      case 'not':
        count(1);
        return !truthy(values[0]);
      case 'kindIs': {
        count(2);
        const value = values[1];
        const kind =
          value === null || value === undefined
            ? 'invalid'
            : typeof value === 'number'
              ? 'float64'
              : typeof value === 'bigint'
                ? 'int64'
                : Array.isArray(value)
                  ? 'slice'
                  : isMap(value)
                    ? 'map'
                    : typeof value;
        return kind === text(values[0]);
      }
      case 'int64': {
        count(1);
        const value = values[0];
        if (typeof value === 'bigint') return value;
        if (typeof value !== 'number') throw new RenderError(`${where}: int64 of a non-number`);
        return BigInt(Math.trunc(value));
      }
      case 'contains':
        count(2);
        return text(values[1]).includes(text(values[0]));
      case 'print':
        return values
          .map((value, i) => {
            const spaced = i > 0 && typeof value !== 'string' && typeof values[i - 1] !== 'string';
            return `${spaced ? ' ' : ''}${goString(value, where)}`;
          })
          .join('');
      case 'printf': {
        const [format, ...rest] = values;
        let next = 0;
        const result = text(format).replace(/%([%sdv])/g, (_match, verb: string) => {
          if (verb === '%') return '%';
          if (next >= rest.length) throw new RenderError(`${where}: printf is missing arguments`);
          const value = rest[next++];
          if (verb === 's') return text(value);
          if (verb === 'd' && !Number.isInteger(value)) throw new RenderError(`${where}: %d`);
          return goString(value, where);
        });
        if (/%[^%sdv]/.test(text(format)) || next !== rest.length) {
          throw new RenderError(`${where}: printf format and arguments do not match`);
        }
        return result;
      }
      case 'quote':
        return values
          .filter((value) => value !== null && value !== undefined)
          .map((value) => JSON.stringify(goString(value, where)))
          .join(' ');
      case 'toString':
        count(1);
        return goString(values[0], where);
      case 'replace':
        count(3);
        return text(values[2]).replaceAll(text(values[0]), text(values[1]));
      case 'trimSuffix': {
        count(2);
        const [suffix, value] = [text(values[0]), text(values[1])];
        return suffix !== '' && value.endsWith(suffix) ? value.slice(0, -suffix.length) : value;
      }
      case 'trunc': {
        count(2);
        const length = values[0];
        if (typeof length !== 'number' || length < 0) throw new RenderError(`${where}: trunc`);
        return text(values[1]).slice(0, length);
      }
      case 'toYaml':
        count(1);
        // Helm's toYaml: keys sorted, no trailing newline.
        return stringifyYaml(values[0], { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
      case 'nindent': {
        count(2);
        const [width, value] = values;
        if (typeof width !== 'number') throw new RenderError(`${where}: nindent width`);
        const pad = ' '.repeat(width);
        return `\n${pad}${text(value).replaceAll('\n', `\n${pad}`)}`;
      }
      case 'sha256sum':
        count(1);
        return createHash('sha256').update(text(values[0])).digest('hex');
      default:
        throw new RenderError(`${where}: function ${name} is not supported by this renderer`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// The chart: files, values (merged as Helm merges them), rendering into Kubernetes objects.
// ---------------------------------------------------------------------------------------

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: Data;
};

const chartYaml = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as DataMap;
const defaultValues = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as DataMap;
const valuesSchema = JSON.parse(
  readFileSync(join(chartDir, 'values.schema.json'), 'utf8'),
) as DataMap;
const chartName = String(chartYaml.name);
const templateFiles = readdirSync(join(chartDir, 'templates')).sort();
const templateSources: Record<string, string> = Object.fromEntries(
  templateFiles.map((file) => [
    `${chartName}/templates/${file}`,
    readFileSync(join(chartDir, 'templates', file), 'utf8'),
  ]),
);

const ajv = new Ajv({ strict: true, strictTypes: true, allErrors: true, allowUnionTypes: true });
const validateValues = ajv.compile(valuesSchema);

/** Helm's merge of user values into the chart's: maps merge deeply, anything else replaces, null deletes. */
function mergeValues(base: Data, overrides: Data): Data {
  if (!isMap(base) || !isMap(overrides)) return structuredClone(overrides);
  const merged: DataMap = structuredClone(base);
  for (const [key, value] of Object.entries(overrides)) {
    if (value === null) delete merged[key];
    else merged[key] = mergeValues(merged[key], value);
  }
  return merged;
}

type Rendered = {
  objects: K8sObject[];
  notes: string;
  valuesRead: Set<string>;
  values: DataMap;
};

function renderChart(overrides: DataMap = {}, releaseName = 'gateway'): Rendered {
  const values = mergeValues(defaultValues, overrides) as DataMap;
  if (!validateValues(values)) {
    throw new Error(
      `values do not match values.schema.json: ${ajv.errorsText(validateValues.errors)}`,
    );
  }
  const renderer = new TemplateRenderer(templateSources);
  renderer.track(values);
  const context = {
    Values: values,
    Release: { Name: releaseName, Namespace: 'auth', Service: 'Helm', IsInstall: true },
    Chart: {
      Name: chartName,
      Version: String(chartYaml.version),
      AppVersion: String(chartYaml.appVersion),
    },
    Template: { BasePath: `${chartName}/templates` },
  };
  const objects: K8sObject[] = [];
  let notes = '';
  for (const file of templateFiles) {
    if (file.startsWith('_')) continue;
    const output = renderer.render(`${chartName}/templates/${file}`, context);
    if (file === 'NOTES.txt') {
      notes = output;
      continue;
    }
    for (const document of parseAllDocuments(output, { version: '1.1' })) {
      if (document.errors.length > 0) {
        throw new Error(`${file} renders invalid YAML: ${document.errors[0]?.message}\n${output}`);
      }
      const object = document.toJS() as K8sObject | null;
      if (object !== null) objects.push(object);
    }
  }
  return { objects, notes, valuesRead: renderer.valuesRead, values };
}

/** The JSON-schema node at a dotted values path (`a.b`, `list[]`), or undefined. */
function schemaAt(path: string): DataMap | undefined {
  const resolve = (node: Data): DataMap | undefined => {
    if (!isMap(node)) return undefined;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      return resolve(
        ref
          .replace(/^#\//, '')
          .split('/')
          .reduce<Data>((at, key) => (isMap(at) ? at[key] : undefined), valuesSchema),
      );
    }
    return node;
  };
  let node = resolve(valuesSchema);
  for (const part of path.split('.')) {
    const [, key = '', lists = ''] = /^([^[]*)((?:\[\])*)$/.exec(part) ?? [];
    const properties = node?.properties;
    node = resolve(
      isMap(properties) && Object.hasOwn(properties, key)
        ? properties[key]
        : isMap(node?.additionalProperties)
          ? node?.additionalProperties
          : undefined,
    );
    for (let i = 0; i < lists.length / 2; i += 1) node = resolve(node?.items);
    if (node === undefined) return undefined;
  }
  return node;
}

// ---------------------------------------------------------------------------------------
// What the code says: the Dockerfile's targets and ports, the variables each process reads,
// which process calls which.
// ---------------------------------------------------------------------------------------

/** Each process: its chart component (also its Dockerfile target) and its source folder. */
const services = [
  { component: 'edge', dir: 'services/edge' },
  { component: 'registry', dir: 'services/registry' },
  { component: 'auth-flow', dir: 'services/auth-flow' },
  { component: 'onboarding', dir: 'services/onboarding' },
] as const;
type ServiceName = (typeof services)[number]['component'];

/** The variable through which a process finds each internal service. */
const serviceUrlVariables: Record<string, ServiceName> = {
  REGISTRY_SERVICE_URL: 'registry',
  AUTH_FLOW_SERVICE_URL: 'auth-flow',
  ONBOARDING_SERVICE_URL: 'onboarding',
};

const variableNames = new Set<string>(configVariables.map((variable) => variable.name));
const secretVariables = new Set<string>(
  configVariables.filter((variable) => variable.secret).map((variable) => variable.name),
);
/** The variables behind each GatewayConfig field: its own, or those a derived field is built from. */
const variablesByField = new Map<string, string[]>(
  configVariables.map((variable) => [variable.field, [variable.name]]),
);
for (const [field, names] of Object.entries(derivedConfigFields)) {
  variablesByField.set(field, [...(names ?? [])]);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = `${dir}/${entry}`;
    if (statSync(join(root, path)).isDirectory())
      return entry === 'testing' ? [] : sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Configuration variables whose GatewayConfig field a service's production code reads as
 * `config.<field>` (the way every service uses its configuration).
 */
function variablesReadBy(dir: string): Set<string> {
  const read = new Set<string>();
  for (const file of sourceFiles(`${dir}/src`)) {
    for (const [, field = ''] of readRepoFile(file).matchAll(/\bconfig\.([A-Za-z]+)\b/g)) {
      for (const name of variablesByField.get(field) ?? []) read.add(name);
    }
  }
  return read;
}

/** The variables a service's main requires beyond the schema's own (requireConfigValues). */
function requiredVariables(dir: string): string[] {
  const source = readRepoFile(`${dir}/src/main.ts`);
  const list = /(?:requiredConfig:|require:|requireConfigValues\(config,)\s*\[([^\]]*)\]/.exec(
    source,
  );
  return [...(list?.[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((match) => match[1] ?? '');
}

type Stage = { from: string; instructions: string[] };
const dockerStages = new Map<string, Stage>();
{
  const logical = readRepoFile('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  let current: Stage | undefined;
  for (const line of logical) {
    const from = /^FROM\s+(?:--\S+\s+)*(\S+)\s+AS\s+(\S+)$/i.exec(line);
    if (from !== null) {
      current = { from: from[1] ?? '', instructions: [] };
      dockerStages.set(from[2] ?? '', current);
    } else {
      current?.instructions.push(line);
    }
  }
}

/** The PORT a Dockerfile target's image sets (ENV PORT=, inherited through its bases). */
function imagePort(target: string): number | undefined {
  for (
    let stage = dockerStages.get(target);
    stage !== undefined;
    stage = dockerStages.get(stage.from)
  ) {
    const env = stage.instructions.filter((line) => /^ENV\s/.test(line)).reverse();
    for (const line of env) {
      const port = /\bPORT=(\d+)/.exec(line);
      if (port !== null) return Number(port[1]);
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Reading the rendered objects.
// ---------------------------------------------------------------------------------------

const asMap = (value: Data, what: string): DataMap => {
  if (!isMap(value)) throw new Error(`${what} is not a mapping`);
  return value;
};
const asList = (value: Data, what: string): Data[] => {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
};
const at = (value: Data, path: string): Data =>
  path
    .split('.')
    .reduce<Data>(
      (node, key) =>
        isMap(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined,
      value,
    );

const ofKind = (rendered: Rendered, kind: string): K8sObject[] =>
  rendered.objects.filter((object) => object.kind === kind);
const componentOf = (object: K8sObject): string | undefined =>
  object.metadata.labels?.['app.kubernetes.io/component'];
const named = (rendered: Rendered, kind: string, name: string): K8sObject | undefined =>
  ofKind(rendered, kind).find((object) => object.metadata.name === name);

function deploymentOf(rendered: Rendered, component: string): K8sObject {
  const found = ofKind(rendered, 'Deployment').filter((d) => componentOf(d) === component);
  if (found.length !== 1) throw new Error(`${found.length} Deployments for ${component}`);
  return found[0] as K8sObject;
}

type Container = {
  name: string;
  image: string;
  command?: string[];
  workingDir?: string;
  ports?: { name: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef: { name: string } }[];
  securityContext?: DataMap;
  resources?: DataMap;
  volumeMounts?: { name: string; mountPath: string }[];
  startupProbe?: DataMap;
  livenessProbe?: DataMap;
  readinessProbe?: DataMap;
};

const podSpecOf = (workload: K8sObject): DataMap =>
  asMap(at(workload, 'spec.template.spec'), `${workload.metadata.name} pod spec`);
function containerOf(workload: K8sObject): Container {
  const containers = asList(podSpecOf(workload).containers, 'containers');
  if (containers.length !== 1) throw new Error(`${workload.metadata.name}: one container expected`);
  return containers[0] as Container;
}
const podLabels = (workload: K8sObject): Record<string, string> =>
  asMap(at(workload, 'spec.template.metadata.labels'), 'pod labels') as Record<string, string>;
const selects = (selector: Data, labels: Record<string, string>): boolean =>
  Object.entries(asMap(selector, 'matchLabels')).every(([key, value]) => labels[key] === value);

/** The environment a container gets: its ConfigMaps, then env, secrets looked up in the rendered Secrets. */
function environmentOf(rendered: Rendered, container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const configMap = named(rendered, 'ConfigMap', source.configMapRef.name);
    if (configMap === undefined) throw new Error(`no ConfigMap ${source.configMapRef.name}`);
    Object.assign(env, asMap(configMap.data, 'ConfigMap data'));
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref === undefined) {
      env[variable.name] = variable.value ?? '';
      continue;
    }
    const secret = named(rendered, 'Secret', ref.name);
    const value = at(secret, `stringData.${ref.key}`);
    if (typeof value === 'string') env[variable.name] = value;
    else if (ref.optional !== true) throw new Error(`${ref.name} has no key ${ref.key}`);
  }
  return env;
}

// ---------------------------------------------------------------------------------------
// Values used by the tests.
// ---------------------------------------------------------------------------------------

const testKey = (byte: number): string => Buffer.alloc(32, byte).toString('base64url');
const productionValues: DataMap = {
  config: {
    IDENTITY_ISSUER: 'https://id.example.com/api/auth/env/PROD',
    AUTH_CALLBACK_URL: 'https://gateway.example.com/v1/auth/callback',
    IDENTITY_ACCESS_TOKEN_AUDIENCE: 'https://gateway.example.com',
    AUTH_HANDOFF_TTL_SECONDS: 90,
    CORS_ORIGINS: 'https://app.example.com',
    TRUSTED_PROXIES: '10.0.0.0/8',
    RATE_LIMIT_BROWSER_PER_IP: 0,
    RATE_LIMIT_INTROSPECT_PER_CLIENT: 5000000,
  },
  secrets: {
    values: {
      DATABASE_URL: 'postgres://gateway:password@db.example.com:5432/gateway',
      REDIS_URL: 'rediss://redis.example.com:6380',
      GATEWAY_ENCRYPTION_KEYS: `k2:${testKey(2)},k1:${testKey(1)}`,
      IDENTITY_OIDC_CLIENT_SECRET: 'oidc-client-secret',
      IDENTITY_ENVIRONMENT_SECRET_KEY: 'e'.repeat(32),
      IDENTITY_SERVICE_KEY: 's'.repeat(32),
    },
  },
  otel: { endpoint: 'http://otel-collector.observability:4318' },
  image: { registry: 'ghcr.io/acme', tag: '1.4.0', pullSecrets: ['ghcr'] },
  ingress: {
    enabled: true,
    className: 'nginx',
    hosts: [{ host: 'gateway.example.com' }],
    tls: [{ secretName: 'gateway-tls', hosts: ['gateway.example.com'] }],
  },
  networkPolicy: {
    edgeFrom: [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
    ],
  },
  topologySpread: [
    { topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' },
  ],
};
const production = renderChart(productionValues);

// ---------------------------------------------------------------------------------------

describe('the template renderer of this test', () => {
  const render = (templates: Record<string, string>, data: Data = {}): string =>
    new TemplateRenderer(templates).render('main', data);

  it('trims whitespace, scopes variables and ranges over maps by sorted key', () => {
    const main = [
      'a:',
      '  {{- $x := "one" }}',
      '  {{- range $k, $v := .m }}',
      '  {{ $k }}: {{ $v | quote }}',
      '  {{- $x = $k }}',
      '  {{- end }}',
      'last: {{ $x }}',
      '{{- /* a comment */ -}}',
    ].join('\n');
    expect(render({ main }, { m: { b: 2, a: 'x' } })).toBe('a:\n  a: "x"\n  b: "2"\nlast: b');
  });

  it('includes named templates with dict, indents YAML and picks if/else-if branches', () => {
    const templates = {
      helpers:
        '{{- define "block" -}}\nname: {{ .name | default "none" }}\n{{ toYaml .list }}\n{{- end }}',
      main: [
        'x:{{ include "block" (dict "name" "" "list" (list "a" 1)) | nindent 2 }}',
        '{{ if eq1 }}{{ end }}',
      ].join('\n'),
    };
    expect(() => render(templates)).toThrow('function eq1 is not supported');
    templates.main = [
      'x:{{ include "block" (dict "name" "" "list" (list "a" 1)) | nindent 2 }}',
      '{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}{{ with .c }}{{ . }}{{ end }}',
    ].join('\n');
    expect(render(templates, { b: true, c: 'c' })).toBe('x:\n  name: none\n  - a\n  - 1\nBc');
  });

  it('compares with eq against any of several values and stops at fail', () => {
    const main = '{{ if eq .a 1 2 3 }}in{{ else }}out{{ end }}{{ if eq .s "x" }}-x{{ end }}';
    expect(render({ main }, { a: 2, s: 'x' })).toBe('in-x');
    expect(render({ main }, { a: 4, s: 'y' })).toBe('out');
    expect(() => render({ main: '{{ eq .a "1" }}' }, { a: 1 })).toThrow('incompatible types');
    expect(() => render({ main: '{{ eq .m 1 }}' }, { m: { a: 1 } })).toThrow('non-basic');
    const failing = '{{ if .bad }}{{ fail (printf "bad is %v" .bad) }}{{ end }}ok';
    expect(render({ main: failing }, { bad: 0 })).toBe('ok');
    expect(() => render({ main: failing }, { bad: 7 })).toThrow('bad is 7');
  });

  it('reads a missing key as empty but fails on a field of an empty value', () => {
    expect(render({ main: '[{{ .a }}]' }, {})).toBe('[]');
    expect(() => render({ main: '{{ .a.b }}' }, {})).toThrow('nil pointer evaluating .b');
    expect(() => render({ main: '{{ required "a is required" .a }}' }, {})).toThrow(
      'a is required',
    );
    expect(() => render({ main: '{{ .m }}' }, { m: { a: 1 } })).toThrow('use toYaml');
    expect(() => render({ main: '{{ .n }}' }, { n: 1000000 })).toThrow('integers below 1e6');
    const kinds = '{{ kindIs "string" .n }} {{ kindIs "string" .s }} {{ .n | int64 | quote }}';
    expect(render({ main: kinds }, { n: 1000000, s: '' })).toBe('false true "1000000"');
    expect(() => render({ main: '{{ template "x" }}' })).toThrow('not supported');
  });

  it('records which values the templates read', () => {
    const renderer = new TemplateRenderer({
      main: '{{ .Values.a.b }}{{ get .Values.c "d" }}{{ range .Values.l }}{{ .e }}{{ end }}',
    });
    const values = { a: { b: 'x' }, c: {}, l: [{ e: 'y' }] };
    renderer.track(values);
    expect(renderer.render('main', { Values: values })).toBe('xy');
    expect([...renderer.valuesRead].sort()).toEqual(['a', 'a.b', 'c', 'c.d', 'l', 'l[].e']);
  });
});

describe('Chart.yaml and values.schema.json', () => {
  it('describes a Helm 3 application chart', () => {
    expect(chartYaml).toMatchObject({ apiVersion: 'v2', name: 'gateway', type: 'application' });
    expect(String(chartYaml.version)).toMatch(/^\d+\.\d+\.\d+$/);
    expect(typeof chartYaml.appVersion).toBe('string');
  });

  it('accepts values.yaml and the production values of these tests', () => {
    expect(valuesSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(validateValues(defaultValues)).toBe(true);
    expect(validateValues(production.values)).toBe(true);
  });

  it.each<[string, DataMap]>([
    ['an unknown top-level key', { replicas: 3 }],
    ['autoscaling for the registry', { registry: { autoscaling: { enabled: true } } }],
    ['an unknown configuration variable', { config: { IDENTITY_ISUER: 'https://id.example.com' } }],
    ['a secret in the ConfigMap', { config: { DATABASE_URL: 'postgres://db/gateway' } }],
    ['a chart-managed variable', { config: { REGISTRY_SERVICE_URL: 'http://x:1' } }],
    ['a bad log level', { config: { LOG_LEVEL: 'loud' } }],
    ['a handoff TTL out of range', { config: { AUTH_HANDOFF_TTL_SECONDS: 301 } }],
    ['a non-postgres DATABASE_URL', { secrets: { values: { DATABASE_URL: 'mysql://db/x' } } }],
    ['a short IDENTITY_SERVICE_KEY', { secrets: { values: { IDENTITY_SERVICE_KEY: 'short' } } }],
    ['a ref without a key', { secrets: { refs: { DATABASE_URL: { name: 'db' } } } }],
    ['running as root', { securityContext: { runAsUser: 0 } }],
    ['a PDB that blocks drains', { edge: { podDisruptionBudget: { maxUnavailable: 0 } } }],
    ['zero replicas', { onboarding: { replicaCount: 0 } }],
    ['an Ingress without hosts', { ingress: { enabled: true } }],
    ['an unknown pull policy', { image: { pullPolicy: 'Sometimes' } }],
    ['METRICS_PORT in the ConfigMap', { config: { METRICS_PORT: 9464 } }],
    ['a privileged metrics port', { metrics: { port: 80 } }],
    ['an unknown metrics key', { metrics: { path: '/metrics' } }],
    ['a bad scrape interval', { metrics: { serviceMonitor: { interval: '30' } } }],
    [
      'a ServiceMonitor label overriding the chart labels',
      { metrics: { serviceMonitor: { labels: { 'app.kubernetes.io/name': 'x' } } } },
    ],
    ['an empty scrape peer', { metrics: { scrapeFrom: [{}] } }],
  ])('rejects %s', (_what, overrides) => {
    expect(validateValues(mergeValues(defaultValues, overrides))).toBe(false);
  });

  it('handles every configuration variable of packages/config exactly once', () => {
    const configProperties = Object.keys(asMap(schemaAt('config')?.properties, 'config'));
    const secretProperties = Object.keys(asMap(schemaAt('secrets.values')?.properties, 'values'));
    const refProperties = Object.keys(asMap(schemaAt('secrets.refs')?.properties, 'refs'));
    // Set by the chart's templates, not by values.
    const setByChart = [
      'PORT',
      'REGISTRY_SERVICE_URL',
      'AUTH_FLOW_SERVICE_URL',
      'ONBOARDING_SERVICE_URL',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      // From metrics.port when metrics.enabled, so the declared ports always match it.
      'METRICS_PORT',
    ];
    // Not for split mode: the embedded database folder; each process names itself for traces;
    // the split services always log JSON (LOG_FORMAT is read by start and start:gateway).
    const notApplicable = ['GATEWAY_DATA_DIR', 'OTEL_SERVICE_NAME', 'LOG_FORMAT'];
    const handled = [...configProperties, ...secretProperties, ...setByChart, ...notApplicable];
    expect([...handled].sort()).toEqual([...variableNames].sort());
    expect(new Set(handled).size).toBe(handled.length);
    expect([...secretProperties].sort()).toEqual([...secretVariables].sort());
    expect(refProperties.sort()).toEqual([...secretVariables].sort());
    expect(configProperties.filter((name) => secretVariables.has(name))).toEqual([]);
  });

  it('limits configuration values the way the configuration parser does', () => {
    const issuer = { IDENTITY_ISSUER: 'https://id.example.com' };
    const properties = asMap(schemaAt('config')?.properties, 'config properties');
    for (const [name, property] of Object.entries(properties)) {
      const { minimum, maximum, enum: allowed } = asMap(property, name);
      if (typeof minimum === 'number' && typeof maximum === 'number') {
        for (const value of [minimum, maximum]) {
          expect(() => loadConfig({ ...issuer, [name]: String(value) })).not.toThrow();
        }
        for (const value of [minimum - 1, maximum + 1]) {
          expect(() => loadConfig({ ...issuer, [name]: String(value) })).toThrow(name);
        }
      }
      for (const value of Array.isArray(allowed) ? allowed : []) {
        expect(() => loadConfig({ ...issuer, [name]: String(value) })).not.toThrow();
      }
    }
    expect(at(properties, 'LOG_LEVEL.enum')).toEqual(['', ...LOG_LEVELS]);
    expect(at(properties, 'NODE_ENV.enum')).toEqual(['', ...NODE_ENVS]);
  });

  it('declares every value a template names', () => {
    const written = new Set<string>();
    for (const [file, source] of Object.entries(templateSources)) {
      for (const [, path = ''] of source.matchAll(/\.Values((?:\.[A-Za-z_]\w*)+)/g)) {
        written.add(`${file}: ${path.slice(1)}`);
      }
    }
    expect(written.size).toBeGreaterThan(20);
    for (const entry of written) {
      const path = entry.split(': ')[1] ?? '';
      expect({ entry, declared: schemaAt(path) !== undefined }).toEqual({ entry, declared: true });
    }
    expect(schemaAt('edge.nonexistent')).toBeUndefined();
  });
});

describe('the chart rendered with production values', () => {
  it('renders well-formed objects with unique names', () => {
    const kinds = production.objects.map((object) => object.kind).sort();
    expect(new Set(kinds)).toEqual(
      new Set([
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Ingress',
        'Job',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Secret',
        'Service',
      ]),
    );
    const seen = new Set<string>();
    for (const object of production.objects) {
      const { name, labels } = object.metadata;
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
      expect(typeof object.apiVersion).toBe('string');
      expect(labels?.['app.kubernetes.io/instance']).toBe('gateway');
      expect(seen.has(`${object.kind}/${name}`)).toBe(false);
      seen.add(`${object.kind}/${name}`);
    }
  });

  it('reads only values that values.schema.json declares', () => {
    expect(production.valuesRead.size).toBeGreaterThan(40);
    for (const path of production.valuesRead) {
      expect({ path, declared: schemaAt(path) !== undefined }).toEqual({ path, declared: true });
    }
  });

  it('runs one Deployment per service from its Dockerfile target, on the port the image uses', () => {
    expect(ofKind(production, 'Deployment').map(componentOf).sort()).toEqual(
      services.map((service) => service.component).sort(),
    );
    const buildCommands = new Map(
      [
        ...readRepoFile('deploy/README.md').matchAll(/docker build --target (\S+)\s+-t (\S+) \./g),
      ].map((match) => [match[1], match[2]]),
    );
    for (const service of services) {
      const container = containerOf(deploymentOf(production, service.component));
      // The image's own CMD starts the process: the target of the same name.
      expect({ service: service.component, command: container.command }).toEqual({
        service: service.component,
        command: undefined,
      });
      expect(container.image).toBe(`ghcr.io/acme/${buildCommands.get(service.component)}:1.4.0`);
      const port = container.ports?.[0]?.containerPort;
      expect({ service: service.component, port }).toEqual({
        service: service.component,
        port: imagePort(service.component),
      });
      expect(container.env?.find((variable) => variable.name === 'PORT')?.value).toBe(String(port));
    }
  });

  it('runs every pod as non-root with a read-only root filesystem and no privileges', () => {
    const workloads = [...ofKind(production, 'Deployment'), ...ofKind(production, 'Job')];
    expect(workloads).toHaveLength(5);
    for (const workload of workloads) {
      const pod = podSpecOf(workload);
      const name = workload.metadata.name;
      expect({ name, pod: pod.securityContext }).toEqual({
        name,
        pod: expect.objectContaining({
          runAsNonRoot: true,
          runAsUser: expect.any(Number),
          seccompProfile: { type: 'RuntimeDefault' },
        }),
      });
      expect(at(pod, 'securityContext.runAsUser')).not.toBe(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = containerOf(workload);
      expect({ name, container: container.securityContext }).toEqual({
        name,
        container: {
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
      });
      // The only writable place: /tmp on an emptyDir.
      expect(container.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
      expect(container.resources).toEqual({
        requests: { cpu: expect.anything(), memory: expect.anything() },
        limits: { memory: expect.anything() },
      });
      expect(pod.imagePullSecrets).toEqual([{ name: 'ghcr' }]);
    }
  });

  it('probes the edge over HTTP and the services with gRPC health checks', () => {
    const edge = containerOf(deploymentOf(production, 'edge'));
    expect(edge.livenessProbe).toMatchObject({ httpGet: { path: '/health/live', port: 'http' } });
    expect(edge.readinessProbe).toMatchObject({ httpGet: { path: '/health/ready', port: 'http' } });
    expect(edge.startupProbe).toMatchObject({ httpGet: { path: '/health/live', port: 'http' } });
    for (const service of services.filter((s) => s.component !== 'edge')) {
      const container = containerOf(deploymentOf(production, service.component));
      const port = container.ports?.[0];
      expect(port?.name).toBe('grpc');
      expect(container.readinessProbe).toMatchObject({ grpc: { port: port?.containerPort } });
      expect(container.readinessProbe).not.toHaveProperty('grpc.service');
      expect(container.livenessProbe).toMatchObject({ tcpSocket: { port: 'grpc' } });
      expect(container.startupProbe).toMatchObject({ tcpSocket: { port: 'grpc' } });
    }
    // Readiness waits for the stores with the DATABASE_TIMEOUT_MS deadline.
    for (const workload of ofKind(production, 'Deployment')) {
      const container = containerOf(workload);
      const env = environmentOf(production, container);
      const deadlineMs = loadConfig(env).databaseTimeoutMs;
      expect(Number(at(container.readinessProbe, 'timeoutSeconds')) * 1000).toBeGreaterThan(
        deadlineMs,
      );
    }
  });

  it('gives each process a configuration its entry point accepts', () => {
    for (const service of services) {
      const container = containerOf(deploymentOf(production, service.component));
      const env = environmentOf(production, container);
      for (const name of Object.keys(env)) {
        expect({ service: service.component, name, known: variableNames.has(name) }).toEqual({
          service: service.component,
          name,
          known: true,
        });
      }
      const config = loadConfig(env);
      const required = requiredVariables(service.dir);
      expect(required.length).toBeGreaterThan(0);
      expect(() => requireConfigValues(config, required)).not.toThrow();
      expect(config.port).toBe(container.ports?.[0]?.containerPort);
      expect(config.otlpEndpoint).toBe('http://otel-collector.observability:4318');
      expect(config.production).toBe(true);
    }
  });

  it('keeps secrets out of the ConfigMap and gives each process only the secrets it reads', () => {
    const configMaps = ofKind(production, 'ConfigMap');
    expect(configMaps).toHaveLength(1);
    const data = asMap(configMaps[0]?.data, 'ConfigMap data');
    expect(Object.keys(data).filter((name) => secretVariables.has(name))).toEqual([]);
    // Numbers as written (0 included: it turns a rate limit off), empty strings left out.
    expect(data).toMatchObject({
      AUTH_HANDOFF_TTL_SECONDS: '90',
      NODE_ENV: 'production',
      RATE_LIMIT_BROWSER_PER_IP: '0',
      RATE_LIMIT_INTROSPECT_PER_CLIENT: '5000000',
    });
    expect(Object.values(data)).not.toContain('');

    for (const service of services) {
      const container = containerOf(deploymentOf(production, service.component));
      const fromSecrets = (container.env ?? [])
        .filter((variable) => variable.valueFrom !== undefined)
        .map((variable) => variable.name);
      const readByCode = [...variablesReadBy(service.dir)].filter((name) =>
        secretVariables.has(name),
      );
      expect({ service: service.component, secrets: fromSecrets.sort() }).toEqual({
        service: service.component,
        secrets: readByCode.sort(),
      });
      const plain = (container.env ?? []).filter((variable) => variable.valueFrom === undefined);
      expect(plain.filter((variable) => secretVariables.has(variable.name))).toEqual([]);
    }
    expect(readByCodeOf('edge')).not.toContain('DATABASE_URL');
    expect(readByCodeOf('auth-flow')).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'GATEWAY_ENCRYPTION_KEYS']),
    );
  });

  it('points each caller at the Service of the service it calls, on its port', () => {
    for (const service of services) {
      const container = containerOf(deploymentOf(production, service.component));
      const urls = (container.env ?? []).filter((variable) => variable.name in serviceUrlVariables);
      const readByCode = [...variablesReadBy(service.dir)].filter(
        (name) => name in serviceUrlVariables,
      );
      expect({ service: service.component, urls: urls.map((u) => u.name).sort() }).toEqual({
        service: service.component,
        urls: readByCode.sort(),
      });
      for (const variable of urls) {
        const url = new URL(variable.value ?? 'missing:');
        const target = named(production, 'Service', url.hostname);
        const wanted = serviceUrlVariables[variable.name];
        expect({
          variable: variable.name,
          protocol: url.protocol,
          selects: componentOf(target as K8sObject),
        }).toEqual({
          variable: variable.name,
          protocol: 'http:',
          selects: wanted,
        });
        const callee = containerOf(deploymentOf(production, wanted ?? ''));
        expect(Number(url.port)).toBe(at(target, 'spec.ports.0.port'));
        expect(Number(url.port)).toBe(callee.ports?.[0]?.containerPort);
      }
    }
  });

  it('gives each Deployment a Service and a PodDisruptionBudget selecting its pods', () => {
    for (const service of services) {
      const deployment = deploymentOf(production, service.component);
      const labels = podLabels(deployment);
      expect(selects(at(deployment, 'spec.selector.matchLabels'), labels)).toBe(true);
      const container = containerOf(deployment);

      const matching = ofKind(production, 'Service').filter(
        (s) => componentOf(s) === service.component,
      );
      expect(matching).toHaveLength(1);
      const svc = matching[0] as K8sObject;
      expect(at(svc, 'spec.type')).toBe('ClusterIP');
      expect(at(svc, 'spec.selector')).toEqual(at(deployment, 'spec.selector.matchLabels'));
      const port = asMap(asList(at(svc, 'spec.ports'), 'ports')[0], 'port');
      expect(port.port).toBe(container.ports?.[0]?.containerPort);
      expect(port.targetPort).toBe(container.ports?.[0]?.name);

      const budgets = ofKind(production, 'PodDisruptionBudget').filter(
        (b) => componentOf(b) === service.component,
      );
      expect(budgets).toHaveLength(1);
      expect(at(budgets[0], 'spec.selector.matchLabels')).toEqual(
        at(deployment, 'spec.selector.matchLabels'),
      );
      expect(at(budgets[0], 'spec.maxUnavailable')).toBe(1);
    }
  });

  it('autoscales the edge and auth-flow on CPU, and only those', () => {
    const autoscalers = ofKind(production, 'HorizontalPodAutoscaler');
    expect(autoscalers.map(componentOf).sort()).toEqual(['auth-flow', 'edge']);
    for (const autoscaler of autoscalers) {
      const deployment = deploymentOf(production, componentOf(autoscaler) ?? '');
      expect(autoscaler.apiVersion).toBe('autoscaling/v2');
      expect(at(autoscaler, 'spec.scaleTargetRef')).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
      expect(at(autoscaler, 'spec')).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
      expect(at(autoscaler, 'spec.metrics')).toEqual([
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
        },
      ]);
      // The autoscaler owns the replica count.
      expect(at(deployment, 'spec.replicas')).toBeUndefined();
    }
    expect(at(deploymentOf(production, 'registry'), 'spec.replicas')).toBe(2);
    expect(at(deploymentOf(production, 'onboarding'), 'spec.replicas')).toBe(2);
  });

  it('routes the Ingress to the edge Service only', () => {
    const ingresses = ofKind(production, 'Ingress');
    expect(ingresses).toHaveLength(1);
    const ingress = ingresses[0] as K8sObject;
    expect(at(ingress, 'spec.ingressClassName')).toBe('nginx');
    expect(at(ingress, 'spec.tls')).toEqual([
      { secretName: 'gateway-tls', hosts: ['gateway.example.com'] },
    ]);
    const edgeService = ofKind(production, 'Service').find((s) => componentOf(s) === 'edge');
    const rules = asList(at(ingress, 'spec.rules'), 'rules');
    expect(rules).toEqual([
      {
        host: 'gateway.example.com',
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: edgeService?.metadata.name, port: { name: 'http' } } },
            },
          ],
        },
      },
    ]);
    expect(at(edgeService, 'spec.ports.0.name')).toBe('http');
  });

  it('lets only the edge be reached from outside, and each service only by its callers', () => {
    const policies = ofKind(production, 'NetworkPolicy');
    const deny = policies.filter((policy) => at(policy, 'spec.ingress') === undefined);
    expect(deny).toHaveLength(1);
    expect(at(deny[0], 'spec.policyTypes')).toEqual(['Ingress']);
    const workloads = [...ofKind(production, 'Deployment'), ...ofKind(production, 'Job')];
    for (const workload of workloads) {
      expect(selects(at(deny[0], 'spec.podSelector.matchLabels'), podLabels(workload))).toBe(true);
    }

    const allowing = policies.filter((policy) => policy !== deny[0]);
    const callersOf = (component: string): string[] =>
      services
        .filter((caller) =>
          [...variablesReadBy(caller.dir)].some((name) => serviceUrlVariables[name] === component),
        )
        .map((caller) => caller.component)
        .sort();
    expect(callersOf('registry')).toEqual(['auth-flow', 'edge']);
    expect(callersOf('auth-flow')).toEqual(['edge']);

    for (const service of services) {
      const deployment = deploymentOf(production, service.component);
      const port = containerOf(deployment).ports?.[0]?.containerPort;
      const applying = allowing.filter((policy) =>
        selects(at(policy, 'spec.podSelector.matchLabels'), podLabels(deployment)),
      );
      expect({ service: service.component, policies: applying.length }).toEqual({
        service: service.component,
        policies: 1,
      });
      const rules = asList(at(applying[0], 'spec.ingress'), 'ingress rules');
      expect(rules).toHaveLength(1);
      const rule = asMap(rules[0], 'rule');
      expect(rule.ports).toEqual([{ port, protocol: 'TCP' }]);
      if (service.component === 'edge') {
        expect(rule.from).toEqual(asMap(productionValues.networkPolicy, 'np').edgeFrom);
        continue;
      }
      const allowed = asList(rule.from, 'from').map((peer) => {
        const selector = asMap(at(peer, 'podSelector.matchLabels'), 'podSelector');
        expect(Object.keys(asMap(peer, 'peer'))).toEqual(['podSelector']);
        const callers = ofKind(production, 'Deployment').filter((d) =>
          selects(selector, podLabels(d)),
        );
        expect(callers).toHaveLength(1);
        return componentOf(callers[0] as K8sObject);
      });
      expect({ service: service.component, allowed: allowed.sort() }).toEqual({
        service: service.component,
        allowed: callersOf(service.component),
      });
    }
  });

  it('migrates every schema in a pre-install and pre-upgrade hook Job', () => {
    const jobs = ofKind(production, 'Job');
    expect(jobs).toHaveLength(1);
    const job = jobs[0] as K8sObject;
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-weight': '0',
    });
    expect(at(job, 'spec.template.spec.restartPolicy')).toBe('Never');
    const container = containerOf(job);
    expect(container.image).toBe('ghcr.io/acme/gateway-registry:1.4.0');
    expect(container.command?.slice(0, 3)).toEqual(['node', '--input-type=module', '-e']);
    const script = container.command?.[3] ?? '';

    // The script imports what the packages export, from a folder where they resolve.
    const workspace = new Map(
      ['packages', 'services'].flatMap((parent) =>
        readdirSync(join(root, parent)).map((dir) => {
          const manifest = JSON.parse(readRepoFile(`${parent}/${dir}/package.json`)) as {
            name: string;
            dependencies?: Record<string, string>;
          };
          return [manifest.name, { dir: `${parent}/${dir}`, manifest }] as const;
        }),
      ),
    );
    const imports = [...script.matchAll(/import \{([^}]+)\} from '([^']+)'/g)];
    expect(imports.map((match) => match[2])).toEqual(['@gateway/all-in-one', '@gateway/db']);
    const folder = (container.workingDir ?? '').replace(/^\/app\//, '');
    const home = [...workspace.values()].find((entry) => entry.dir === folder);
    expect(home?.manifest.name).toBe('@gateway/all-in-one');
    for (const [, names = '', specifier = ''] of imports) {
      const target = workspace.get(specifier);
      expect(
        specifier === home?.manifest.name || specifier in (home?.manifest.dependencies ?? {}),
      ).toBe(true);
      const index = readRepoFile(`${target?.dir}/src/index.ts`);
      for (const name of names.split(',').map((n) => n.trim())) {
        expect({
          specifier,
          name,
          exported: new RegExp(`export \\{[^}]*\\b${name}\\b`).test(index),
        }).toEqual({
          specifier,
          name,
          exported: true,
        });
      }
      // The image ships the package's compiled code.
      expect(readRepoFile('Dockerfile')).toContain(
        `COPY --from=build /app/${target?.dir}/dist ${target?.dir}/dist`,
      );
    }
    expect(readRepoFile('Dockerfile')).toContain('COPY --from=app /app /app');
    expect(script).toContain('migrateSchema(db, set)');

    // Hooks run before the release's Secret exists: the Job reads its own hook Secret,
    // created before it, holding the same DATABASE_URL.
    const ref = container.env?.find((variable) => variable.name === 'DATABASE_URL')?.valueFrom
      ?.secretKeyRef;
    const hookSecret = named(production, 'Secret', ref?.name ?? '');
    expect(hookSecret?.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-weight': '-10',
    });
    expect(environmentOf(production, container)).toEqual({
      DATABASE_URL: at(productionValues, 'secrets.values.DATABASE_URL'),
    });
  });

  it('rolls the pods when the configuration changes and spreads them as asked', () => {
    const changed = renderChart(
      mergeValues(productionValues, { config: { LOG_LEVEL: 'debug' } }) as DataMap,
    );
    for (const service of services) {
      const checksum = (rendered: Rendered): Data =>
        at(
          deploymentOf(rendered, service.component),
          'spec.template.metadata.annotations.checksum/config',
        );
      expect(checksum(production)).toMatch(/^[0-9a-f]{64}$/);
      expect(checksum(changed)).not.toBe(checksum(production));
      const deployment = deploymentOf(production, service.component);
      expect(podSpecOf(deployment).topologySpreadConstraints).toEqual([
        {
          topologyKey: 'topology.kubernetes.io/zone',
          maxSkew: 1,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: at(deployment, 'spec.selector.matchLabels') },
        },
      ]);
    }
  });
});

function readByCodeOf(component: ServiceName): string[] {
  const service = services.find((s) => s.component === component);
  return [...variablesReadBy(service?.dir ?? '')];
}

describe('the chart rendered with other values', () => {
  it('refuses to render without the issuer or the required secrets', () => {
    expect(() => renderChart()).toThrow('config.IDENTITY_ISSUER is required');
    const withIssuer = { config: { IDENTITY_ISSUER: 'https://id.example.com' } };
    expect(() => renderChart(withIssuer)).toThrow('secrets.values.DATABASE_URL is required');
    const withoutKeys = mergeValues(productionValues, {
      secrets: { values: { GATEWAY_ENCRYPTION_KEYS: '' } },
    }) as DataMap;
    expect(() => renderChart(withoutKeys)).toThrow(
      'secrets.values.GATEWAY_ENCRYPTION_KEYS is required',
    );
  });

  it('reads secrets from an existing Secret and per-variable references', () => {
    const rendered = renderChart({
      config: { IDENTITY_ISSUER: 'https://id.example.com' },
      secrets: {
        existingSecret: 'gateway-env',
        refs: { DATABASE_URL: { name: 'gateway-db-app', key: 'uri' } },
      },
    });
    expect(ofKind(rendered, 'Secret')).toEqual([]);
    const refs = [...ofKind(rendered, 'Deployment'), ...ofKind(rendered, 'Job')].flatMap(
      (workload) =>
        (containerOf(workload).env ?? []).flatMap(({ name, valueFrom }) =>
          valueFrom === undefined ? [] : [{ variable: name, ...valueFrom.secretKeyRef }],
        ),
    );
    // registry, auth-flow, onboarding and the migration Job.
    expect(refs.filter((ref) => ref.variable === 'DATABASE_URL')).toHaveLength(4);
    expect(refs.length).toBeGreaterThan(4);
    for (const ref of refs) {
      const { variable } = ref;
      expect(ref).toEqual(
        variable === 'DATABASE_URL'
          ? { variable, name: 'gateway-db-app', key: 'uri' }
          : expect.objectContaining({ variable, name: 'gateway-env', key: variable }),
      );
    }
  });

  it('leaves out what is turned off', () => {
    const rendered = renderChart(
      mergeValues(productionValues, {
        ingress: { enabled: false },
        networkPolicy: { enabled: false },
        migrations: { enabled: false },
        edge: {
          autoscaling: { enabled: false },
          replicaCount: 3,
          podDisruptionBudget: { enabled: false },
        },
        authFlow: { autoscaling: { enabled: false } },
      }) as DataMap,
    );
    for (const kind of ['Ingress', 'NetworkPolicy', 'Job', 'HorizontalPodAutoscaler']) {
      expect({ kind, count: ofKind(rendered, kind).length }).toEqual({ kind, count: 0 });
    }
    expect(ofKind(rendered, 'PodDisruptionBudget').map(componentOf).sort()).toEqual([
      'auth-flow',
      'onboarding',
      'registry',
    ]);
    expect(at(deploymentOf(rendered, 'edge'), 'spec.replicas')).toBe(3);
    expect(at(deploymentOf(rendered, 'auth-flow'), 'spec.replicas')).toBe(2);
    // Only the chart's own Secret: the Job's hook Secret goes with the Job.
    expect(ofKind(rendered, 'Secret')).toHaveLength(1);
  });

  it('names objects after the release and keeps the service addresses consistent', () => {
    const rendered = renderChart(productionValues, 'auth');
    const edge = containerOf(deploymentOf(rendered, 'edge'));
    expect(deploymentOf(rendered, 'edge').metadata.name).toBe('auth-gateway-edge');
    const registryUrl = edge.env?.find((variable) => variable.name === 'REGISTRY_SERVICE_URL');
    expect(registryUrl?.value).toBe('http://auth-gateway-registry:8081');
    expect(named(rendered, 'Service', 'auth-gateway-registry')).toBeDefined();
    expect(rendered.notes).toContain('auth-gateway-edge');
    expect(rendered.notes).toContain('gateway.example.com');
  });

  it("says where the admin console is: the public URL's /admin/, or the local port's", () => {
    expect(production.notes).toContain('Admin console: https://gateway.example.com/admin/\n');
    expect(production.notes).toContain('platform_admin');
    const local = renderChart({
      config: { IDENTITY_ISSUER: 'https://id.example.com' },
      secrets: { existingSecret: 'gateway-env' },
    });
    expect(local.notes).toContain(
      `Admin console: http://localhost:${String(asMap(local.values.edge, 'edge').port)}/admin/ `,
    );
  });
});

describe('the chart with Prometheus metrics', () => {
  const scrapePeer = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
  };
  const withMetrics = (metrics: DataMap): Rendered =>
    renderChart(mergeValues(productionValues, { metrics }) as DataMap);
  const enabled = withMetrics({
    enabled: true,
    serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus' } },
    scrapeFrom: [scrapePeer],
  });
  const metricsPort = 9464;
  const scrapeAnnotations = ['prometheus.io/scrape', 'prometheus.io/port', 'prometheus.io/path'];
  const podAnnotationsOf = (workload: K8sObject): Record<string, string> =>
    asMap(at(workload, 'spec.template.metadata.annotations'), 'pod annotations') as Record<
      string,
      string
    >;
  const rulesOf = (policy: K8sObject): DataMap[] =>
    (at(policy, 'spec.ingress') === undefined
      ? []
      : asList(at(policy, 'spec.ingress'), 'ingress rules')
    ).map((rule) => asMap(rule, 'rule'));
  const allowingPolicyOf = (rendered: Rendered, deployment: K8sObject): K8sObject => {
    const applying = ofKind(rendered, 'NetworkPolicy').filter(
      (policy) =>
        rulesOf(policy).length > 0 &&
        selects(at(policy, 'spec.podSelector.matchLabels'), podLabels(deployment)),
    );
    expect(applying).toHaveLength(1);
    return applying[0] as K8sObject;
  };

  it('adds nothing of it while metrics are disabled, whatever else is set', () => {
    const disabled = withMetrics({
      enabled: false,
      serviceMonitor: { enabled: true },
      scrapeFrom: [scrapePeer],
    });
    for (const rendered of [production, disabled]) {
      expect(ofKind(rendered, 'ServiceMonitor')).toEqual([]);
      for (const workload of [...ofKind(rendered, 'Deployment'), ...ofKind(rendered, 'Job')]) {
        const container = containerOf(workload);
        const name = workload.metadata.name;
        expect({ name, ports: (container.ports ?? []).map((port) => port.name) }).toEqual({
          name,
          ports: workload.kind === 'Job' ? [] : [expect.stringMatching(/^(http|grpc)$/)],
        });
        expect(environmentOf(rendered, container)).not.toHaveProperty('METRICS_PORT');
        const annotations = Object.keys(
          asMap(at(workload, 'spec.template.metadata.annotations') ?? {}, 'annotations'),
        );
        expect(annotations.filter((key) => key.startsWith('prometheus.io/'))).toEqual([]);
      }
      for (const service of ofKind(rendered, 'Service')) {
        expect(asList(at(service, 'spec.ports'), 'ports')).toHaveLength(1);
      }
      for (const policy of ofKind(rendered, 'NetworkPolicy')) {
        expect(rulesOf(policy).length).toBeLessThanOrEqual(1);
        expect(JSON.stringify(policy)).not.toContain(String(metricsPort));
      }
    }
    expect(disabled.notes).not.toContain('Metrics');
  });

  it('declares the metrics port and sets METRICS_PORT in every Deployment', () => {
    for (const service of services) {
      const deployment = deploymentOf(enabled, service.component);
      const container = containerOf(deployment);
      const component = service.component;
      // The service port stays first (probes, Services and the tests above read it there).
      expect({ component, ports: container.ports }).toEqual({
        component,
        ports: [
          expect.objectContaining({ name: service.component === 'edge' ? 'http' : 'grpc' }),
          { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
        ],
      });
      const env = environmentOf(enabled, container);
      expect(env.METRICS_PORT).toBe(String(metricsPort));
      // What the process makes of it: the port start-telemetry serves /metrics on.
      const config = loadConfig(env);
      expect({ component, metricsPort: config.metricsPort, port: config.port }).toEqual({
        component,
        metricsPort,
        port: container.ports?.[0]?.containerPort,
      });
      expect(podAnnotationsOf(deployment)).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(metricsPort),
        'prometheus.io/path': '/metrics',
      });
    }
    // The migration Job serves no metrics.
    const job = ofKind(enabled, 'Job')[0] as K8sObject;
    expect(containerOf(job).ports).toBeUndefined();
    expect(environmentOf(enabled, containerOf(job))).not.toHaveProperty('METRICS_PORT');
    expect(enabled.notes).toContain(`:${metricsPort}/metrics`);
    expect(enabled.notes).not.toContain('scrapeFrom is empty');
    expect(enabled.valuesRead).toContain('metrics.scrapeFrom');
    for (const path of enabled.valuesRead) {
      expect({ path, declared: schemaAt(path) !== undefined }).toEqual({ path, declared: true });
    }
  });

  it('gives every Service a metrics port and one ServiceMonitor per service selecting it', () => {
    const monitors = ofKind(enabled, 'ServiceMonitor');
    expect(monitors.map(componentOf).sort()).toEqual(
      services.map((service) => service.component).sort(),
    );
    for (const monitor of monitors) {
      expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus' });
      const selected = ofKind(enabled, 'Service').filter((service) =>
        selects(at(monitor, 'spec.selector.matchLabels'), service.metadata.labels ?? {}),
      );
      expect(selected.map((service) => service.metadata.name)).toEqual([
        `gateway-${componentOf(monitor)}`,
      ]);
      const service = selected[0] as K8sObject;
      expect(at(monitor, 'spec.endpoints')).toEqual([
        { port: 'metrics', path: '/metrics', interval: '30s' },
      ]);
      const ports = asList(at(service, 'spec.ports'), 'ports');
      expect(ports).toHaveLength(2);
      expect(ports[1]).toEqual({
        name: 'metrics',
        port: metricsPort,
        targetPort: 'metrics',
        protocol: 'TCP',
        appProtocol: 'http',
      });
      // The Service's metrics port reaches the container port of that name.
      const deployment = deploymentOf(enabled, componentOf(service) ?? '');
      expect(selects(at(service, 'spec.selector'), podLabels(deployment))).toBe(true);
      expect(containerOf(deployment).ports?.map((port) => port.name)).toContain('metrics');
    }
    expect(ofKind(withMetrics({ enabled: true }), 'ServiceMonitor')).toEqual([]);
  });

  it('lets the scrape peers reach the metrics port of every pod, and only that port', () => {
    const policies = ofKind(enabled, 'NetworkPolicy');
    const deny = policies.filter((policy) => rulesOf(policy).length === 0);
    expect(deny).toHaveLength(1);
    for (const service of services) {
      const deployment = deploymentOf(enabled, service.component);
      const servicePort = containerOf(deployment).ports?.[0]?.containerPort;
      const rules = rulesOf(allowingPolicyOf(enabled, deployment));
      const before = rulesOf(
        allowingPolicyOf(production, deploymentOf(production, service.component)),
      );
      // The service rule as without metrics, then the scrape rule.
      expect(rules).toEqual([
        ...before,
        { from: [scrapePeer], ports: [{ port: metricsPort, protocol: 'TCP' }] },
      ]);
      for (const rule of rules) {
        const ports = asList(rule.ports, 'ports').map((port) => at(port, 'port'));
        const fromScraper = JSON.stringify(rule.from).includes('prometheus');
        const component = service.component;
        expect({ component, ports, fromScraper }).toEqual({
          component,
          ports: fromScraper ? [metricsPort] : [servicePort],
          fromScraper,
        });
      }
    }

    // No peers: the metrics port stays closed (no rule would mean open to all).
    const closed = withMetrics({ enabled: true });
    for (const service of services) {
      const deployment = deploymentOf(closed, service.component);
      expect(rulesOf(allowingPolicyOf(closed, deployment))).toEqual(
        rulesOf(allowingPolicyOf(production, deploymentOf(production, service.component))),
      );
    }
    expect(closed.notes).toContain('metrics.scrapeFrom is empty');
  });

  it('leaves the annotations out on request and refuses a metrics port equal to a service port', () => {
    const bare = withMetrics({ enabled: true, podAnnotations: false });
    for (const deployment of ofKind(bare, 'Deployment')) {
      expect(
        Object.keys(podAnnotationsOf(deployment)).filter((key) => scrapeAnnotations.includes(key)),
      ).toEqual([]);
      expect(containerOf(deployment).ports?.[1]?.name).toBe('metrics');
    }
    const moved = withMetrics({ enabled: true, port: 9100 });
    const registry = containerOf(deploymentOf(moved, 'registry'));
    expect(registry.ports?.[1]?.containerPort).toBe(9100);
    expect(environmentOf(moved, registry).METRICS_PORT).toBe('9100');
    expect(podAnnotationsOf(deploymentOf(moved, 'edge'))['prometheus.io/port']).toBe('9100');
    for (const port of [8080, 8081, 8082, 8083]) {
      expect(() => withMetrics({ enabled: true, port })).toThrow(
        `metrics.port (${port}) must differ from edge.port`,
      );
    }
    expect(() => withMetrics({ enabled: false, port: 8080 })).not.toThrow();
  });
});

describe('the chart with a Sentinel or Cluster Redis', () => {
  const withRedis = (config: DataMap) =>
    renderChart(
      mergeValues(productionValues, {
        config,
        secrets: { values: { REDIS_URL: '', REDIS_PASSWORD: 'redis-password' } },
      }) as DataMap,
    );
  const modes = [
    {
      mode: 'sentinel',
      config: {
        REDIS_SENTINELS: 'redis-sentinel-0.redis:26379,redis-sentinel-1.redis:26379',
        REDIS_SENTINEL_MASTER: 'gateway',
        REDIS_REQUIRE_PERSISTENCE: 'true',
      },
    },
    { mode: 'cluster', config: { REDIS_CLUSTER_NODES: 'redis-0.redis:6379', REDIS_TLS: 'true' } },
  ];

  it.each(modes)(
    'needs no REDIS_URL in $mode mode, gives it to no process, and the password to those using Redis',
    ({ mode, config }) => {
      expect(validateValues(mergeValues(defaultValues, { config }))).toBe(true);
      const rendered = withRedis(config);
      for (const service of services) {
        const container = containerOf(deploymentOf(rendered, service.component));
        const env = environmentOf(rendered, container);
        const loaded = loadConfig(env);
        expect(() => requireConfigValues(loaded, requiredVariables(service.dir))).not.toThrow();
        expect(env).not.toHaveProperty('REDIS_URL');
        // Every process reads the one ConfigMap; the edge and auth-flow connect to Redis.
        expect(loaded.redis?.mode).toBe(mode);
        const usesRedis = service.component === 'edge' || service.component === 'auth-flow';
        expect({ service: service.component, password: env.REDIS_PASSWORD }).toEqual({
          service: service.component,
          password: usesRedis ? 'redis-password' : undefined,
        });
      }
    },
  );

  it('still requires REDIS_URL when config names no Sentinel or Cluster', () => {
    expect(() => withRedis({})).toThrow('secrets.values.REDIS_URL is required');
  });

  it('refuses host:port lists and flags the configuration parser refuses', () => {
    for (const config of [
      { REDIS_SENTINELS: 'redis-sentinel-0' },
      { REDIS_CLUSTER_NODES: 'redis://redis-0:6379' },
      { REDIS_TLS: true },
      { REDIS_REQUIRE_PERSISTENCE: 'yes' },
    ]) {
      expect({ config, valid: validateValues(mergeValues(defaultValues, { config })) }).toEqual({
        config,
        valid: false,
      });
    }
  });

  it('says in values.yaml how Redis keeps the sessions, pointing at the operations guide', () => {
    const values = readRepoFile('deploy/helm/gateway/values.yaml');
    expect(values).toContain('appendonly yes, appendfsync everysec');
    expect(values).toContain('REDIS_REQUIRE_PERSISTENCE');
    expect(values).toContain('docs/operations.md, "Redis"');
    expect(readRepoFile('docs/operations.md')).toMatch(/^## Redis$/m);
  });
});
