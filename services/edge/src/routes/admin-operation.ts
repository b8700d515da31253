import type { RequestHandler, Response, Router } from 'express';
import type { JsonObject } from '@bufbuild/protobuf';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { setHttpSpanName } from '@gateway/telemetry';
import type { Authentication } from '../auth/authentication.js';
import type { Permission } from '../auth/principal.js';
import { defineOperation, type OperationDefinition } from '../http/operation.js';
import { ErrorBodySchema, type OperationCatalog } from '../http/operation-catalog.js';
import type { EdgeClients } from '../service-clients.js';

type ObjectSchema = z.ZodType<Record<string, unknown>>;

export type RegistryRouteOptions = {
  clients: EdgeClients;
  authentication: Authentication;
};

/** Admin answers are per caller and may carry secrets: never stored by a cache. */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json(body);
}

/** Request bodies come from JSON.parse, so their objects (metadata) are JSON. */
export function asJsonObject(value: Record<string, unknown> | undefined): JsonObject | undefined {
  return value as JsonObject | undefined;
}

/** A JSON response of an operation, for its OpenAPI description. */
export function json(description: string, schema: z.ZodType) {
  return { description, content: { 'application/json': { schema } } };
}

/** Spec 5: admin routes accept a machine token, a user token or the gateway cookie. */
export const ADMIN_SECURITY: NonNullable<RouteConfig['security']> = [
  { serviceBearerAuth: [] },
  { userBearerAuth: [] },
  { gatewayCookieAuth: [] },
];

const errorDescriptions = {
  400: 'Malformed parameters or body, or an unknown property (VALIDATION_ERROR).',
  401: 'Missing or invalid credentials (UNAUTHORIZED).',
  403: 'The caller lacks the permission (FORBIDDEN).',
  404: 'No such resource (NOT_FOUND).',
  409: 'The change conflicts with the current state.',
  503: 'A gateway service or the identity service is unavailable.',
} as const;

/** Error responses of an admin operation: 400, 401, 403 and 503 always, plus `more`. */
export function adminErrorResponses(
  ...more: (keyof typeof errorDescriptions)[]
): RouteConfig['responses'] {
  const statuses = [...new Set([400, 401, 403, ...more, 503] as const)].sort((a, b) => a - b);
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
 * An operation behind `requirePermission` (or another authorising middleware, such as
 * `requireSchemaPermission`): the caller is authenticated and authorised
 * before its parameters or body are read, so an unauthenticated request learns nothing
 * about validation and a refused one never reaches a service. Described with the admin
 * security schemes.
 */
export function defineAdminOperation<
  Q extends ObjectSchema | undefined = undefined,
  P extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  router: Router,
  catalog: OperationCatalog,
  auth: { authentication: Authentication; permission: Permission } | { authorize: RequestHandler },
  operation: OperationDefinition<Q, P, B>,
): void {
  const nameSpan: RequestHandler = function nameOperationSpan(_req, res, next) {
    setHttpSpanName(res, operation.operationId);
    next();
  };
  router[operation.method](
    operation.path,
    nameSpan,
    'authorize' in auth ? auth.authorize : auth.authentication.requirePermission(auth.permission),
  );
  defineOperation(router, catalog, { security: ADMIN_SECURITY, ...operation });
}
