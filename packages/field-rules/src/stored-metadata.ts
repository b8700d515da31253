import { z } from 'zod';
import { isStorableText, STORED_TEXT_MESSAGE } from './stored-text.js';

// Free JSON metadata (of a platform, an environment, a profile): stored as jsonb and written
// back by recursive code (JSON.stringify, the services' size checks), so its shape is
// bounded before a service sees it.

/** Objects and arrays nested in one metadata value, the metadata object itself included. */
export const METADATA_MAX_DEPTH = 10;
/** Members of one metadata object, at any level. */
export const METADATA_MAX_KEYS = 100;
/** Length of one member name. */
export const METADATA_MAX_KEY_LENGTH = 200;
/**
 * Names that mean something to JavaScript objects: a consumer that merges metadata into an
 * object could change its prototype with them.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Issue = { path: (string | number)[]; message: string };

/** What is wrong with a metadata value, each problem with its path; empty when nothing. */
export function metadataIssues(value: unknown): Issue[] {
  const issues: Issue[] = [];
  visit(value, [], 1, issues);
  return issues;
}

function visit(value: unknown, path: (string | number)[], depth: number, issues: Issue[]): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) issues.push({ path, message: STORED_TEXT_MESSAGE });
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth > METADATA_MAX_DEPTH) {
    issues.push({ path, message: `must be nested at most ${METADATA_MAX_DEPTH} levels deep` });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => visit(item, [...path, index], depth + 1, issues));
    return;
  }
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) {
    issues.push({ path, message: `must have at most ${METADATA_MAX_KEYS} members` });
    return;
  }
  for (const key of keys) {
    const problem = keyProblem(key);
    if (problem !== undefined) issues.push({ path: [...path, key], message: problem });
    else visit((value as Record<string, unknown>)[key], [...path, key], depth + 1, issues);
  }
}

function keyProblem(key: string): string | undefined {
  if (key === '') return 'member names must not be empty';
  if (key.length > METADATA_MAX_KEY_LENGTH) {
    return `member names must be at most ${METADATA_MAX_KEY_LENGTH} characters`;
  }
  if (RESERVED_KEYS.has(key)) return 'member names must not be __proto__, constructor or prototype';
  if (!isStorableText(key)) return `member names ${STORED_TEXT_MESSAGE}`;
  return undefined;
}

/**
 * A metadata object: free JSON members within the bounds above. The value is checked as it
 * was sent, before zod copies it (a copy would silently drop a `__proto__` member).
 */
export function metadataSchema() {
  return z.preprocess(
    (metadata, ctx) => {
      for (const issue of metadataIssues(metadata)) {
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: metadata });
      }
      return metadata;
    },
    z.record(z.string(), z.unknown()),
  );
}
