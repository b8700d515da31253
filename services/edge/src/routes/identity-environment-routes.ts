import { requestContextOf } from '../auth/authentication.js';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, asJsonObject, json } from './openapi-responses.js';
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

// Spec 4.11: identity environments. Every operation requires `platforms:admin`.

const PLATFORMS_ADMIN = { kind: 'admin', permission: 'platforms:admin' } as const;
const tags = ['Identity environments'];

const listIdentityEnvironments = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'listIdentityEnvironments',
  method: 'get',
  path: '/v1/identity-environments',
  summary: 'List identity environments.',
  description: 'The deployment environment first, then production, staging, development, then key.',
  tags,
  responses: {
    200: json('The environments.', IdentityEnvironmentListJson),
    ...adminErrorResponses(),
  },
  handler: async ({ services }) => {
    const { registry } = services.clients;
    const answer = await registry.listIdentityEnvironments({});
    return {
      items: answer.items.map((item) => toIdentityEnvironmentJson(item, services.baseUrl)),
    };
  },
});

const createIdentityEnvironment = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 201 },
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
  handler: async ({ body, caller, requestId, services }) => {
    const { registry } = services.clients;
    const answer = await registry.createIdentityEnvironment({
      context: requestContextOf(caller, requestId),
      environmentKey: body.environmentKey,
      displayName: body.displayName,
      tier: body.tier,
      issuer: body.issuer,
      oidcClientId: body.oidcClientId,
      oidcClientSecret: body.oidcClientSecret,
      postLogoutRedirectUri: body.postLogoutRedirectUri,
      metadata: asJsonObject(body.metadata),
    });
    return toIdentityEnvironmentJson(answer.environment, services.baseUrl);
  },
});

const getIdentityEnvironment = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ params, services }) => {
    const { registry } = services.clients;
    const answer = await registry.getIdentityEnvironment({
      environmentKey: params.environmentKey,
    });
    return toIdentityEnvironmentDetailJson(answer.environment, services.baseUrl);
  },
});

const updateIdentityEnvironment = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ params, body, caller, requestId, services }) => {
    const { registry } = services.clients;
    const answer = await registry.updateIdentityEnvironment({
      context: requestContextOf(caller, requestId),
      environmentKey: params.environmentKey,
      displayName: body.displayName,
      tier: body.tier,
      issuer: body.issuer,
      oidcClientId: body.oidcClientId,
      oidcClientSecret: nullable(body.oidcClientSecret),
      postLogoutRedirectUri: nullable(body.postLogoutRedirectUri),
      metadata: asJsonObject(body.metadata),
    });
    return toIdentityEnvironmentJson(answer.environment, services.baseUrl);
  },
});

const lifecycleOperations = (['deactivate', 'activate'] as const).map((step) =>
  defineOperation({
    auth: PLATFORMS_ADMIN,
    response: { kind: 'json', status: 200 },
    operationId: `${step}IdentityEnvironment`,
    method: step === 'deactivate' ? 'delete' : 'post',
    path:
      step === 'deactivate'
        ? '/v1/identity-environments/:environmentKey'
        : '/v1/identity-environments/:environmentKey/activate',
    summary:
      step === 'deactivate'
        ? 'Deactivate an identity environment (soft). 409 while platforms are active.'
        : 'Activate an identity environment.',
    tags,
    params: EnvironmentKeyParams,
    responses: {
      200: json('The environment.', IdentityEnvironmentJson),
      ...adminErrorResponses(404, 409),
    },
    handler: async ({ params, caller, requestId, services }) => {
      const { registry } = services.clients;
      const request = {
        context: requestContextOf(caller, requestId),
        environmentKey: params.environmentKey,
      };
      const answer =
        step === 'deactivate'
          ? await registry.deactivateIdentityEnvironment(request)
          : await registry.activateIdentityEnvironment(request);
      return toIdentityEnvironmentJson(answer.environment, services.baseUrl);
    },
  }),
);

const validateIdentityEnvironment = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ params, services }) => {
    const { registry } = services.clients;
    const answer = await registry.validateIdentityEnvironment({
      environmentKey: params.environmentKey,
    });
    return toValidationReportJson(answer);
  },
});

/** Spec 4.11: every operation on identity environments. */
export const identityEnvironmentOperations: readonly AnyOperation[] = [
  listIdentityEnvironments,
  createIdentityEnvironment,
  getIdentityEnvironment,
  updateIdentityEnvironment,
  ...lifecycleOperations,
  validateIdentityEnvironment,
];
