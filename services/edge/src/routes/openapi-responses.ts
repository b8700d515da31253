import type { RouteConfig, ZodContentObject } from '@asteasolutions/zod-to-openapi';
import type { JsonObject } from '@bufbuild/protobuf';
import type { z } from 'zod';
import { ErrorBodySchema, OAuthErrorBodySchema } from '../http/operation-catalog.js';

// The OpenAPI descriptions of answers that many operations share.

/** A JSON response of an operation, for its OpenAPI description. */
export function json(description: string, schema: z.ZodType) {
  return { description, content: { 'application/json': { schema } } };
}

/** Request bodies come from JSON.parse, so their objects (metadata) are JSON. */
export function asJsonObject(value: Record<string, unknown> | undefined): JsonObject | undefined {
  return value as JsonObject | undefined;
}

const adminErrors = {
  400: 'Malformed parameters or body, or an unknown property (VALIDATION_ERROR).',
  401: 'Missing or invalid credentials (UNAUTHORIZED).',
  403: 'The caller lacks the permission (FORBIDDEN).',
  404: 'No such resource (NOT_FOUND).',
  409: 'The change conflicts with the current state.',
  503: 'A gateway service or the identity service is unavailable.',
} as const;

const userErrors = {
  400: 'Malformed parameters or body (VALIDATION_ERROR).',
  401: 'Missing or invalid credentials, or no live session (UNAUTHORIZED).',
  403: 'A machine token, a blocked account, or a cookie write without an allowlisted Origin (FORBIDDEN).',
  404: 'No such resource (NOT_FOUND).',
  409: 'The request conflicts with the current state (CONFLICT).',
  503: 'A gateway service or the identity service is unavailable.',
} as const;

function errorsWith(
  descriptions: Partial<Record<number, string>>,
  statuses: readonly number[],
): RouteConfig['responses'] {
  const sorted = [...new Set(statuses)].sort((a, b) => a - b);
  return errorResponses(Object.fromEntries(sorted.map((status) => [status, descriptions[status]])));
}

/** Error responses of an admin operation: 400, 401, 403 and 503 always, plus `more`. */
export function adminErrorResponses(
  ...more: (keyof typeof adminErrors)[]
): RouteConfig['responses'] {
  return errorsWith(adminErrors, [400, 401, 403, ...more, 503]);
}

/** Error responses of a user operation: 401, 403 and 503 always, plus `more`. */
export function userErrorResponses(...more: (keyof typeof userErrors)[]): RouteConfig['responses'] {
  return errorsWith(userErrors, [401, 403, ...more, 503]);
}

/** A 302 answer in the OpenAPI description; `setCookie` describes a cookie it sets. */
export function redirectResponse(description: string, setCookie?: string) {
  const text = { type: 'string' as const };
  return {
    description: `302 Found: ${description}`,
    headers: {
      Location: { description: 'Where the browser goes next.', schema: text },
      'Cache-Control': { description: 'Always `no-store`.', schema: text },
      ...(setCookie === undefined
        ? {}
        : { 'Set-Cookie': { description: setCookie, schema: text } }),
    },
  };
}

export function errorResponses(
  descriptions: Partial<Record<number, string>>,
): RouteConfig['responses'] {
  return responsesWith(descriptions, { 'application/json': { schema: ErrorBodySchema } });
}

/** Error responses of an operation that answers errors as OAuth 2.0 does (`errorBody: 'oauth'`). */
export function oauthErrorResponses(
  descriptions: Partial<Record<number, string>>,
): RouteConfig['responses'] {
  return responsesWith(descriptions, { 'application/json': { schema: OAuthErrorBodySchema } });
}

/**
 * The error answers of an endpoint a browser navigates to: JSON, or for a request that
 * prefers `text/html` the same error as an HTML page (http/error-page.ts).
 */
export function browserErrorResponses(
  descriptions: Partial<Record<number, string>>,
): RouteConfig['responses'] {
  return responsesWith(descriptions, {
    'application/json': { schema: ErrorBodySchema },
    'text/html': { schema: { type: 'string' } },
  });
}

function responsesWith(
  descriptions: Partial<Record<number, string>>,
  content: ZodContentObject,
): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(descriptions).map(([status, description]) => [status, { description, content }]),
  );
}

/** The sentence that tells a browser endpoint's readers about its error page. */
export const ERROR_PAGE_NOTE =
  'Errors are JSON; a request that prefers `text/html` (a browser navigation) gets the same ' +
  'status with an HTML page.';
