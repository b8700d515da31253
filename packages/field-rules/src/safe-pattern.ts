// The safety check for admin-supplied `validation.pattern` regexes (spec 2.12). Patterns are
// written by platform admins and run by the gateway against user input, so a pattern must
// not be able to make the regex engine backtrack for an exponential time (ReDoS).
//
// The rule is a conservative star-height check on the parsed pattern:
//
// - A quantifier REPEATS when it allows more than one repetition: `*`, `+`, `{n,}`, `{n,m}`
//   with m > 1 and `{n}` with n > 1. `?`, `{0,1}`, `{1}` and `{0}` do not repeat.
// - A quantifier is VARIABLE when it can match different numbers of repetitions: `?`, `*`,
//   `+`, `{n,}` and `{n,m}` with n < m. `{n}` is fixed.
// - A group (of any kind) with a repeating quantifier must not contain, at any depth, a
//   variable quantifier or an alternation `|`. This forbids `(a+)+`, `(a|a)*`, `(\w+\s?)*`,
//   `(aa?)+` and `((a)+.)+`, and still allows `(-\d{4})?`, `(\d{3}-){2}` and `([a-z]-)+`.
// - Backreferences (`\1`, `\k<name>`) and lookbehind (`(?<=`, `(?<!`) are rejected outright.
//
// The pattern must also compile as a JavaScript RegExp with the `u` flag (which makes the
// syntax strict: no stray `{`, no quantified assertions, no unknown escapes) and be at most
// 500 characters long. Values are tested against the whole value (`^(?:pattern)$`), so there
// is a single start position.
//
// Not covered: polynomial backtracking between adjacent, overlapping quantifiers outside any
// repeated group (`^\d*\d*\d*x$` is quadratic-to-cubic, not exponential). Its cost is bounded
// by the value length, which `maxLength` and the request body limit cap.

import { codePointLength, TEXT_LIMITS } from './plain-text.js';

export type PatternCheck = { ok: true; regex: RegExp } | { ok: false; message: string };

type Quantifier = { min: number; max: number };

type Frame = {
  /** Whether this group (or anything inside it) holds an alternation. */
  alternation: boolean;
  /** Whether anything inside holds a variable quantifier. */
  variable: boolean;
};

class UnsafePattern extends Error {}

const repeats = (q: Quantifier): boolean => q.max > 1;
const isVariable = (q: Quantifier): boolean => q.min !== q.max;

/** Reads a quantifier at `i`, returning it and the index after it (including a lazy `?`). */
function readQuantifier(
  pattern: string,
  i: number,
): { quantifier: Quantifier; next: number } | undefined {
  const c = pattern[i];
  let quantifier: Quantifier;
  let next = i + 1;
  if (c === '*') quantifier = { min: 0, max: Infinity };
  else if (c === '+') quantifier = { min: 1, max: Infinity };
  else if (c === '?') quantifier = { min: 0, max: 1 };
  else if (c === '{') {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
    if (match === null) return undefined;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    quantifier = { min, max };
    next = i + match[0].length;
  } else return undefined;
  if (pattern[next] === '?') next += 1;
  return { quantifier, next };
}

/** The index after the escape sequence starting with the `\` at `i`. */
function skipEscape(pattern: string, i: number): number {
  const c = pattern[i + 1];
  if (c === undefined) return i + 1;
  if (/[1-9]/.test(c)) throw new UnsafePattern('must not use backreferences');
  if (c === 'k' && pattern[i + 2] === '<') throw new UnsafePattern('must not use backreferences');
  if ((c === 'p' || c === 'P' || c === 'u') && pattern[i + 2] === '{') {
    const end = pattern.indexOf('}', i + 3);
    return end === -1 ? pattern.length : end + 1;
  }
  return i + 2;
}

/** The index after the character class starting with the `[` at `i`. */
function skipClass(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === '^') j += 1;
  while (j < pattern.length && pattern[j] !== ']') {
    j = pattern[j] === '\\' ? skipEscape(pattern, j) : j + 1;
  }
  return j + 1;
}

/** The index after the group opener `(`, `(?:`, `(?=`, `(?!`, `(?<name>` or `(?flags:` at `i`. */
function skipGroupOpener(pattern: string, i: number): number {
  if (pattern[i + 1] !== '?') return i + 1;
  const rest = pattern.slice(i + 2);
  if (rest.startsWith('<=') || rest.startsWith('<!')) {
    throw new UnsafePattern('must not use lookbehind');
  }
  if (rest.startsWith(':') || rest.startsWith('=') || rest.startsWith('!')) return i + 3;
  const named = /^<[^>]*>/.exec(rest);
  if (named !== null) return i + 2 + named[0].length;
  const modifiers = /^[a-zA-Z-]*:/.exec(rest);
  if (modifiers !== null) return i + 2 + modifiers[0].length;
  return i + 2;
}

/**
 * Walks the pattern once. Every group pushes a frame; when a group closes, its summary
 * (alternation or variable quantifier inside) is checked against the quantifier that follows
 * it and then merged into the enclosing frame.
 */
function checkStarHeight(pattern: string): void {
  const stack: Frame[] = [{ alternation: false, variable: false }];
  const top = (): Frame => stack[stack.length - 1] as Frame;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    let atom: Frame = { alternation: false, variable: false };
    let next: number;
    if (c === '(') {
      stack.push({ alternation: false, variable: false });
      i = skipGroupOpener(pattern, i);
      continue;
    } else if (c === '|') {
      top().alternation = true;
      i += 1;
      continue;
    } else if (c === ')') {
      atom = stack.pop() as Frame;
      next = i + 1;
    } else if (c === '\\') {
      next = skipEscape(pattern, i);
    } else if (c === '[') {
      next = skipClass(pattern, i);
    } else {
      next = i + 1;
    }
    const read = readQuantifier(pattern, next);
    if (read !== undefined) {
      if (repeats(read.quantifier) && (atom.alternation || atom.variable)) {
        throw new UnsafePattern(
          'must not repeat a group that contains a quantifier or an alternation (for example `(a+)+` or `(a|b)*`); such patterns can take exponential time',
        );
      }
      if (isVariable(read.quantifier)) atom.variable = true;
      next = read.next;
    }
    const frame = top();
    frame.alternation ||= atom.alternation;
    frame.variable ||= atom.variable;
    i = next;
  }
}

/**
 * Checks an admin-supplied pattern: at most 500 characters, compiles with the `u` flag, and
 * passes the star-height rule above. On success returns the regex anchored to the whole value.
 */
export function checkSafePattern(pattern: string): PatternCheck {
  if (codePointLength(pattern) > TEXT_LIMITS.pattern) {
    return { ok: false, message: `must be at most ${TEXT_LIMITS.pattern} characters` };
  }
  try {
    new RegExp(pattern, 'u');
  } catch {
    return { ok: false, message: 'must be a valid regular expression (with the `u` flag)' };
  }
  try {
    checkStarHeight(pattern);
  } catch (error) {
    if (error instanceof UnsafePattern) return { ok: false, message: error.message };
    throw error;
  }
  return { ok: true, regex: new RegExp(`^(?:${pattern})$`, 'u') };
}

const compiled = new Map<string, PatternCheck>();
const MAX_CACHED = 500;

/** checkSafePattern with a small cache, for validating many values against few patterns. */
export function safePattern(pattern: string): PatternCheck {
  let result = compiled.get(pattern);
  if (result === undefined) {
    result = checkSafePattern(pattern);
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(pattern, result);
  }
  return result;
}
