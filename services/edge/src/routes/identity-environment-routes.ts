import type { Router } from 'express';
import { requestContextOf } from '../auth/authentication.js';
import type { OperationCatalog } from '../http/operation-catalog.js';
import {
  adminErrorResponses,
  asJsonObject,
  defineAdminOperation,
  json,
  sendJson,
  type RegistryRouteOptions,
} from './admin-operation.js';
import {
  toIdentityEnvironmentDetailJson,
  toIdentityEnvironmentJson,
  toValidationReportJson,
} from './registry-mappers.js';
import {
  CreateEnvironmentBody,
  EnvironmentKeyParams,
  IdentityEnvironmentDetailJson,
  IdentityEnvironmentJson,
  IdentityEnvironmentListJson,
  UpdateEnvironmentBody,
  ValidationReportJson,
} from './registry-schemas.js';

/**
 * A nullable field of a PATCH body as the registry's NullableString: absent leaves the
 * property unchanged, a string sets it, null clears it.
 */
function nullable(value: string | null | undefined): { value?: string } | undefined {
  if (value === undefined) return undefined;
  return value === null ? {} : { value };
}

/** Spec 4.11: identity environments. Every operation requires `platforms:admin`. */
export function registerIdentityEnvironmentRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: RegistryRouteOptions,
): void {
  const registry = options.clients.registry;
  const auth = { authentication: options.authentication, permission: 'platforms:admin' as const };
  const tags = ['Identity environments'];

  defineAdminOperation(router, catalog, auth, {
    operationId: 'listIdentityEnvironments',
    method: 'get',
    path: '/v1/identity-environments',
    summary: 'List identity environments.',
    description:
      'The deployment environment first, then production, staging, development, then key.',
    tags,
    responses: {
      200: json('The environments.', IdentityEnvironmentListJson),
      ...adminErrorResponses(),
    },
    handler: async (_input, _req, res) => {
      const answer = await registry.listIdentityEnvironments({});
      sendJson(res, 200, { items: answer.items.map(toIdentityEnvironmentJson) });
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'createIdentityEnvironment',
    method: 'post',
    path: '/v1/identity-environments',
    summary: 'Add an identity environment.',
    description:
      '409 on a duplicate key, issuer or (issuer, client), or on the deployment issuer. ' +
      '503 IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING when a secret is sent without ' +
      'IDENTITY_ENVIRONMENT_SECRET_KEY.',
    tags,
    body: CreateEnvironmentBody,
    responses: {
      201: json('The environment.', IdentityEnvironmentJson),
      ...adminErrorResponses(409),
    },
    handler: async ({ body }, _req, res) => {
      const answer = await registry.createIdentityEnvironment({
        context: requestContextOf(res),
        environmentKey: body.environmentKey,
        displayName: body.displayName,
        tier: body.tier,
        issuer: body.issuer,
        oidcClientId: body.oidcClientId,
        oidcClientSecret: body.oidcClientSecret,
        postLogoutRedirectUri: body.postLogoutRedirectUri,
        metadata: asJsonObject(body.metadata),
      });
      sendJson(res, 201, toIdentityEnvironmentJson(answer.environment));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'getIdentityEnvironment',
    method: 'get',
    path: '/v1/identity-environments/:environmentKey',
    summary: 'Read an identity environment with its platforms.',
    tags,
    params: EnvironmentKeyParams,
    responses: {
      200: json('The environment.', IdentityEnvironmentDetailJson),
      ...adminErrorResponses(404),
    },
    handler: async ({ params }, _req, res) => {
      const answer = await registry.getIdentityEnvironment({
        environmentKey: params.environmentKey,
      });
      sendJson(res, 200, toIdentityEnvironmentDetailJson(answer.environment));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'updateIdentityEnvironment',
    method: 'patch',
    path: '/v1/identity-environments/:environmentKey',
    summary: 'Change an identity environment.',
    description:
      'At least one field. The deployment row is read-only (409); a tier change while ' +
      'platforms are bound is 409.',
    tags,
    params: EnvironmentKeyParams,
    body: UpdateEnvironmentBody,
    responses: {
      200: json('The environment.', IdentityEnvironmentJson),
      ...adminErrorResponses(404, 409),
    },
    handler: async ({ params, body }, _req, res) => {
      const answer = await registry.updateIdentityEnvironment({
        context: requestContextOf(res),
        environmentKey: params.environmentKey,
        displayName: body.displayName,
        tier: body.tier,
        issuer: body.issuer,
        oidcClientId: body.oidcClientId,
        oidcClientSecret: nullable(body.oidcClientSecret),
        postLogoutRedirectUri: nullable(body.postLogoutRedirectUri),
        metadata: asJsonObject(body.metadata),
      });
      sendJson(res, 200, toIdentityEnvironmentJson(answer.environment));
    },
  });

  const lifecycle = [
    {
      operationId: 'deactivateIdentityEnvironment',
      method: 'delete',
      path: '/v1/identity-environments/:environmentKey',
      summary: 'Deactivate an identity environment (soft). 409 while platforms are active.',
      call: registry.deactivateIdentityEnvironment,
    },
    {
      operationId: 'activateIdentityEnvironment',
      method: 'post',
      path: '/v1/identity-environments/:environmentKey/activate',
      summary: 'Activate an identity environment.',
      call: registry.activateIdentityEnvironment,
    },
  ] as const;
  for (const step of lifecycle) {
    defineAdminOperation(router, catalog, auth, {
      operationId: step.operationId,
      method: step.method,
      path: step.path,
      summary: step.summary,
      tags,
      params: EnvironmentKeyParams,
      responses: {
        200: json('The environment.', IdentityEnvironmentJson),
        ...adminErrorResponses(404, 409),
      },
      handler: async ({ params }, _req, res) => {
        const answer = await step.call({
          context: requestContextOf(res),
          environmentKey: params.environmentKey,
        });
        sendJson(res, 200, toIdentityEnvironmentJson(answer.environment));
      },
    });
  }

  defineAdminOperation(router, catalog, auth, {
    operationId: 'validateIdentityEnvironment',
    method: 'post',
    path: '/v1/identity-environments/:environmentKey/validate',
    summary: "Check an environment's discovery, endpoints, JWKS, client and secret.",
    description:
      'Read-only. Does not prove that the identity side accepts the client credentials or ' +
      'redirect URIs.',
    tags,
    params: EnvironmentKeyParams,
    responses: {
      200: json('The checks.', ValidationReportJson),
      ...adminErrorResponses(404),
    },
    handler: async ({ params }, _req, res) => {
      const answer = await registry.validateIdentityEnvironment({
        environmentKey: params.environmentKey,
      });
      sendJson(res, 200, toValidationReportJson(answer));
    },
  });
}
