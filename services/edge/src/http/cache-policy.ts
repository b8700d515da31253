import type { ServerResponse } from 'node:http';
import type { ResponsePolicy } from './operation.js';

// Every cache rule of the edge. Answers of /v1 are per caller and may carry secrets (tokens,
// keys shown once, codes in redirect URLs), and errors are never kept either: `no-store`.
// Two answers are public: a stored avatar (a new image gets a new id, so it never changes)
// and the absent icon.

export const NO_STORE = 'no-store';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const ICON_ABSENCE = 'public, max-age=86400';
/** How long a browser keeps the Swagger UI's static files. */
export const DOCS_ASSET_MAX_AGE = '1h';

/** The Cache-Control of an operation's answers, set before its first step. */
export function setOperationCachePolicy(res: ServerResponse, policy: ResponsePolicy): void {
  res.setHeader('Cache-Control', policy.kind === 'immutable-image' ? IMMUTABLE : NO_STORE);
}

/** Errors, whatever answered them: never stored. */
export function setErrorCachePolicy(res: ServerResponse): void {
  res.setHeader('Cache-Control', NO_STORE);
}

/** `/favicon.ico`: the gateway has no icon, and browsers may remember that for a day. */
export function setIconAbsenceCachePolicy(res: ServerResponse): void {
  res.setHeader('Cache-Control', ICON_ABSENCE);
}
