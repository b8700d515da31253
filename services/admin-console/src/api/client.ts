import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

/** The admin API's types, generated from the edge's /openapi.json (scripts/generate-api.ts). */
export type Schemas = components['schemas'];

/**
 * The console's one API client: same-origin requests with the gateway cookie. The browser
 * sends `Origin` on every write itself, and the gateway's own origin is on the allowlist (the
 * console's redirect pair), so writes pass the cookie-write check.
 */
export const api = createClient<paths>({
  baseUrl: globalThis.location?.origin ?? '',
  credentials: 'same-origin',
});

/** What the gateway answered instead of success: `{ code, message, details }` (spec 7). */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(status: number, body: unknown) {
    const error = readErrorBody(body);
    super(error.message);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = error.code;
    this.details = error.details;
  }

  /** `details.issues` of a VALIDATION_ERROR, by field path (`redirectPairs.0.returnUrl`). */
  fieldErrors(): Record<string, string> {
    const issues = this.details?.issues;
    const found: Record<string, string> = {};
    if (!Array.isArray(issues)) return found;
    for (const issue of issues as unknown[]) {
      if (typeof issue !== 'object' || issue === null) continue;
      const { path, message } = issue as { path?: unknown; message?: unknown };
      if (typeof path === 'string' && typeof message === 'string') found[path] ??= message;
    }
    return found;
  }
}

function readErrorBody(body: unknown): {
  code: string;
  message: string;
  details: Record<string, unknown> | undefined;
} {
  if (typeof body !== 'object' || body === null) {
    return {
      code: 'UNKNOWN',
      message: 'The gateway did not answer as expected.',
      details: undefined,
    };
  }
  const { code, message, details } = body as Record<string, unknown>;
  return {
    code: typeof code === 'string' ? code : 'UNKNOWN',
    message: typeof message === 'string' ? message : 'The request failed.',
    details:
      typeof details === 'object' && details !== null
        ? (details as Record<string, unknown>)
        : undefined,
  };
}

type FetchResult<T> = { data?: T; error?: unknown; response: Response };

/** The answer's body, or an ApiProblem; a 401 also tells the app that the session ended. */
export async function unwrap<T>(request: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await request;
  } catch {
    throw new ApiProblem(0, {
      code: 'NETWORK',
      message: 'The gateway could not be reached. Check the connection and try again.',
    });
  }
  if (result.response.ok) return result.data as T;
  if (result.response.status === 401) {
    globalThis.dispatchEvent?.(new Event(SESSION_ENDED_EVENT));
  }
  throw new ApiProblem(result.response.status, result.error);
}

/** Dispatched on `window` when an API call answers 401: the session ended. */
export const SESSION_ENDED_EVENT = 'admin-console:session-ended';
