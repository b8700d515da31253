import type { RequestHandler, Router } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { setHttpSpanName } from '@gateway/telemetry';
import type { UserAuthentication } from '../auth/user-authentication.js';
import { defineOperation, type OperationDefinition } from '../http/operation.js';
import { ErrorBodySchema, type OperationCatalog } from '../http/operation-catalog.js';

// Spec 4.8, 4.9 and 5: operations of the signed-in user (Bearer user token or cookie).

type ObjectSchema = z.ZodType<Record<string, unknown>>;

/** Spec 5: user routes take a user token or the gateway cookie. */
export const USER_SECURITY: NonNullable<RouteConfig['security']> = [
  { userBearerAuth: [] },
  { gatewayCookieAuth: [] },
];

const errorDescriptions = {
  400: 'Malformed parameters or body (VALIDATION_ERROR).',
  401: 'Missing or invalid credentials, or no live session (UNAUTHORIZED).',
  403: 'A machine token, a blocked account, or a cookie write without an allowlisted Origin (FORBIDDEN).',
  404: 'No such resource (NOT_FOUND).',
  409: 'The request conflicts with the current state (CONFLICT).',
  503: 'A gateway service or the identity service is unavailable.',
} as const;

/** Error responses of a user operation: 401, 403 and 503 always, plus `more`. */
export function userErrorResponses(
  ...more: (keyof typeof errorDescriptions)[]
): RouteConfig['responses'] {
  const statuses = [...new Set([401, 403, ...more, 503] as const)].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: errorDescriptions[status],
        content: { 'application/json': { schema: ErrorBodySchema } },
      },
    ]),
  );
}

/**
 * An operation behind `requireUser`: the caller is authenticated before anything else is
 * read, and described with the user security schemes. Answers are per user: `no-store`.
 */
export function defineUserOperation<
  Q extends ObjectSchema | undefined = undefined,
  P extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  router: Router,
  catalog: OperationCatalog,
  userAuthentication: UserAuthentication,
  operation: OperationDefinition<Q, P, B>,
): void {
  const nameSpan: RequestHandler = function nameOperationSpan(_req, res, next) {
    setHttpSpanName(res, operation.operationId);
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
  router[operation.method](operation.path, nameSpan, userAuthentication.requireUser);
  defineOperation(router, catalog, { security: USER_SECURITY, ...operation });
}
