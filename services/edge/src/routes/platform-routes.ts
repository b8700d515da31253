import type { Router } from 'express';
import type { IssuedCredential, Platform } from '@gateway/contracts';
import { requestContextOf } from '../auth/authentication.js';
import type { OperationCatalog } from '../http/operation-catalog.js';
import {
  adminErrorResponses,
  defineAdminOperation,
  asJsonObject,
  json,
  sendJson,
  type RegistryRouteOptions,
} from './admin-operation.js';
import { toCredentialResponseJson, toPlatformJson } from './registry-mappers.js';
import {
  CreateCredentialBody,
  CreatePlatformBody,
  CredentialParams,
  CredentialResponseJson,
  ListPlatformsQuery,
  PlatformJson,
  PlatformKeyParams,
  PlatformListJson,
  RotateCredentialBody,
  UpdatePlatformBody,
} from './registry-schemas.js';

/** Spec 4.10: the platform registry. Every operation requires `platforms:admin`. */
export function registerPlatformRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: RegistryRouteOptions,
): void {
  const { registry, onboarding } = options.clients;
  /** Spec 9: the onboarding service's requirementVersion of each platform. */
  const versionsOf = async (platforms: readonly (Platform | undefined)[]) => {
    const platformKeys = platforms.flatMap((platform) =>
      platform === undefined ? [] : [platform.platformKey],
    );
    const { versions } = await onboarding.getRequirementVersions({ platformKeys });
    return (platform: Platform | undefined) => versions[platform?.platformKey ?? ''] ?? 0;
  };
  const platformJson = async (platform: Platform | undefined) =>
    toPlatformJson(platform, (await versionsOf([platform]))(platform));
  const credentialResponseJson = async (answer: {
    platform?: Platform | undefined;
    credentials: IssuedCredential[];
  }) => toCredentialResponseJson(answer, (await versionsOf([answer.platform]))(answer.platform));
  const auth = { authentication: options.authentication, permission: 'platforms:admin' as const };
  const tags = ['Platform registry'];

  defineAdminOperation(router, catalog, auth, {
    operationId: 'listPlatforms',
    method: 'get',
    path: '/v1/platforms',
    summary: 'List platforms.',
    description:
      'Active and inactive platforms; with `archived=true`, archived platforms only. ' +
      'Filter by `identityEnvironmentKey`.',
    tags,
    query: ListPlatformsQuery,
    responses: { 200: json('The platforms.', PlatformListJson), ...adminErrorResponses() },
    handler: async ({ query }, _req, res) => {
      const answer = await registry.listPlatforms({
        identityEnvironmentKey: query.identityEnvironmentKey,
        archived: query.archived === 'true',
      });
      const versionOf = await versionsOf(answer.items);
      sendJson(res, 200, {
        items: answer.items.map((platform) => toPlatformJson(platform, versionOf(platform))),
      });
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'createPlatform',
    method: 'post',
    path: '/v1/platforms',
    summary: 'Register a platform.',
    description:
      'Returns the platform and one BFF key per distinct callback, each secret shown once. ' +
      'Unknown `identityEnvironmentKey`: 400 IDENTITY_ENVIRONMENT_NOT_FOUND.',
    tags,
    body: CreatePlatformBody,
    responses: {
      201: json('The platform and its new keys.', CredentialResponseJson),
      ...adminErrorResponses(409),
    },
    handler: async ({ body }, _req, res) => {
      const answer = await registry.createPlatform({
        context: requestContextOf(res),
        platformKey: body.platformKey,
        displayName: body.displayName,
        identityEnvironmentKey: body.identityEnvironmentKey,
        redirectPairs: body.redirectPairs,
        defaultOnboardingMode: body.defaultOnboardingMode,
        centralOnboardingEnabled: body.centralOnboardingEnabled,
        platformOnboardingPath: body.platformOnboardingPath,
        metadata: asJsonObject(body.metadata),
      });
      sendJson(res, 201, await credentialResponseJson(answer));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'getPlatform',
    method: 'get',
    path: '/v1/platforms/:platformKey',
    summary: 'Read a platform.',
    tags,
    params: PlatformKeyParams,
    responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404) },
    handler: async ({ params }, _req, res) => {
      const answer = await registry.getPlatform({ platformKey: params.platformKey });
      sendJson(res, 200, await platformJson(answer.platform));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'updatePlatform',
    method: 'patch',
    path: '/v1/platforms/:platformKey',
    summary: 'Change a platform.',
    description:
      '`redirectPairs`, when present, replace the pairs: a pair with an `id` is updated in ' +
      'place, one without is matched by `returnUrl`; omitted pairs and their keys are ' +
      'deleted. Keys issued for new callbacks are returned once in `credentials`.',
    tags,
    params: PlatformKeyParams,
    body: UpdatePlatformBody,
    responses: {
      200: json('The platform and any keys issued for new callbacks.', CredentialResponseJson),
      ...adminErrorResponses(404, 409),
    },
    handler: async ({ params, body }, _req, res) => {
      const answer = await registry.updatePlatform({
        context: requestContextOf(res),
        platformKey: params.platformKey,
        displayName: body.displayName,
        identityEnvironmentKey: body.identityEnvironmentKey,
        replaceRedirectPairs: body.redirectPairs !== undefined,
        redirectPairs: body.redirectPairs ?? [],
        defaultOnboardingMode: body.defaultOnboardingMode,
        centralOnboardingEnabled: body.centralOnboardingEnabled,
        platformOnboardingPath:
          body.platformOnboardingPath === undefined
            ? undefined
            : { value: body.platformOnboardingPath ?? undefined },
        metadata: asJsonObject(body.metadata),
      });
      sendJson(res, 200, await credentialResponseJson(answer));
    },
  });

  const lifecycle = [
    {
      operationId: 'deactivatePlatform',
      method: 'delete',
      path: '/v1/platforms/:platformKey',
      summary: 'Deactivate a platform (soft).',
      call: registry.deactivatePlatform,
    },
    {
      operationId: 'activatePlatform',
      method: 'post',
      path: '/v1/platforms/:platformKey/activate',
      summary: 'Activate a platform. 409 PLATFORM_ARCHIVED when archived.',
      call: registry.activatePlatform,
    },
    {
      operationId: 'archivePlatform',
      method: 'post',
      path: '/v1/platforms/:platformKey/archive',
      summary: 'Archive an inactive platform (409 otherwise). Idempotent.',
      call: registry.archivePlatform,
    },
    {
      operationId: 'restorePlatform',
      method: 'post',
      path: '/v1/platforms/:platformKey/restore',
      summary: 'Restore an archived platform (as inactive). Idempotent.',
      call: registry.restorePlatform,
    },
  ] as const;
  for (const step of lifecycle) {
    defineAdminOperation(router, catalog, auth, {
      operationId: step.operationId,
      method: step.method,
      path: step.path,
      summary: step.summary,
      tags,
      params: PlatformKeyParams,
      responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
      handler: async ({ params }, _req, res) => {
        const answer = await step.call({
          context: requestContextOf(res),
          platformKey: params.platformKey,
        });
        sendJson(res, 200, await platformJson(answer.platform));
      },
    });
  }

  defineAdminOperation(router, catalog, auth, {
    operationId: 'createPlatformCredential',
    method: 'post',
    path: '/v1/platforms/:platformKey/credentials',
    summary: 'Issue a platform key.',
    description:
      '`{ kind: "bff", redirectPairId }` for the callback of a redirect pair, or ' +
      '`{ kind: "backend" }` (at most one per platform, introspect only). The secret is ' +
      'shown once.',
    tags,
    params: PlatformKeyParams,
    body: CreateCredentialBody,
    responses: {
      201: json('The platform and the new key.', CredentialResponseJson),
      ...adminErrorResponses(404, 409),
    },
    handler: async ({ params, body }, _req, res) => {
      const answer = await registry.createPlatformCredential({
        context: requestContextOf(res),
        platformKey: params.platformKey,
        kind: body.kind,
        redirectPairId: body.kind === 'bff' ? body.redirectPairId : undefined,
      });
      sendJson(res, 201, await credentialResponseJson(answer));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'rotatePlatformCredential',
    method: 'post',
    path: '/v1/platforms/:platformKey/credentials/:credentialId/rotate',
    summary: 'Rotate a platform key.',
    description:
      'Issues a new secret, shown once. The previous secret stays valid for 60 minutes ' +
      'unless `revokePreviousImmediately` or `rotateClientId` is set.',
    tags,
    params: CredentialParams,
    body: RotateCredentialBody,
    responses: {
      200: json('The platform and the rotated key.', CredentialResponseJson),
      ...adminErrorResponses(404, 409),
    },
    handler: async ({ params, body }, _req, res) => {
      const answer = await registry.rotatePlatformCredential({
        context: requestContextOf(res),
        platformKey: params.platformKey,
        credentialId: params.credentialId,
        revokePreviousImmediately: body?.revokePreviousImmediately ?? false,
        rotateClientId: body?.rotateClientId ?? false,
      });
      sendJson(res, 200, await credentialResponseJson(answer));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'revokePreviousPlatformCredentialSecret',
    method: 'delete',
    path: '/v1/platforms/:platformKey/credentials/:credentialId/previous-secret',
    summary: "End a rotated key's grace period: its previous secret stops working.",
    tags,
    params: CredentialParams,
    responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
    handler: async ({ params }, _req, res) => {
      const answer = await registry.revokePreviousPlatformCredentialSecret({
        context: requestContextOf(res),
        platformKey: params.platformKey,
        credentialId: params.credentialId,
      });
      sendJson(res, 200, await platformJson(answer.platform));
    },
  });

  defineAdminOperation(router, catalog, auth, {
    operationId: 'deletePlatformCredential',
    method: 'delete',
    path: '/v1/platforms/:platformKey/credentials/:credentialId',
    summary: 'Delete a platform key.',
    description: '409 for the last BFF key of an active platform.',
    tags,
    params: CredentialParams,
    responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
    handler: async ({ params }, _req, res) => {
      const answer = await registry.deletePlatformCredential({
        context: requestContextOf(res),
        platformKey: params.platformKey,
        credentialId: params.credentialId,
      });
      sendJson(res, 200, await platformJson(answer.platform));
    },
  });
}
