import type { Client } from '@connectrpc/connect';
import type { IssuedCredential, OnboardingService, Platform } from '@gateway/contracts';
import { requestContextOf } from '../auth/authentication.js';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, asJsonObject, json } from './openapi-responses.js';
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

// Spec 4.10: the platform registry. Every operation requires `platforms:admin`.

const PLATFORMS_ADMIN = { kind: 'admin', permission: 'platforms:admin' } as const;
const tags = ['Platform registry'];

type Onboarding = Pick<Client<typeof OnboardingService>, 'getRequirementVersions'>;

/** Spec 9: the onboarding service's requirementVersion of each platform. */
async function versionsOf(onboarding: Onboarding, platforms: readonly (Platform | undefined)[]) {
  const platformKeys = platforms.flatMap((platform) =>
    platform === undefined ? [] : [platform.platformKey],
  );
  const { versions } = await onboarding.getRequirementVersions({ platformKeys });
  return (platform: Platform | undefined) => versions[platform?.platformKey ?? ''] ?? 0;
}

async function platformJson(onboarding: Onboarding, platform: Platform | undefined) {
  return toPlatformJson(platform, (await versionsOf(onboarding, [platform]))(platform));
}

async function credentialResponseJson(
  onboarding: Onboarding,
  answer: { platform?: Platform | undefined; credentials: IssuedCredential[] },
) {
  const versionOf = await versionsOf(onboarding, [answer.platform]);
  return toCredentialResponseJson(answer, versionOf(answer.platform));
}

const listPlatforms = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ query, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.listPlatforms({
      identityEnvironmentKey: query.identityEnvironmentKey,
      archived: query.archived === 'true',
    });
    const versionOf = await versionsOf(onboarding, answer.items);
    return {
      items: answer.items.map((platform) => toPlatformJson(platform, versionOf(platform))),
    };
  },
});

const createPlatform = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 201 },
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
  handler: async ({ body, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.createPlatform({
      context: requestContextOf(caller, requestId),
      platformKey: body.platformKey,
      displayName: body.displayName,
      identityEnvironmentKey: body.identityEnvironmentKey,
      redirectPairs: body.redirectPairs,
      defaultOnboardingMode: body.defaultOnboardingMode,
      centralOnboardingEnabled: body.centralOnboardingEnabled,
      platformOnboardingPath: body.platformOnboardingPath,
      metadata: asJsonObject(body.metadata),
      adminConsole: body.adminConsole,
    });
    return await credentialResponseJson(onboarding, answer);
  },
});

const getPlatform = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'getPlatform',
  method: 'get',
  path: '/v1/platforms/:platformKey',
  summary: 'Read a platform.',
  tags,
  params: PlatformKeyParams,
  responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404) },
  handler: async ({ params, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.getPlatform({ platformKey: params.platformKey });
    return await platformJson(onboarding, answer.platform);
  },
});

const updatePlatform = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ params, body, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.updatePlatform({
      context: requestContextOf(caller, requestId),
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
      adminConsole: body.adminConsole,
    });
    return await credentialResponseJson(onboarding, answer);
  },
});

type LifecycleStep = 'deactivate' | 'activate' | 'archive' | 'restore';

const lifecycle: {
  step: LifecycleStep;
  method: 'delete' | 'post';
  path: string;
  summary: string;
}[] = [
  {
    step: 'deactivate',
    method: 'delete',
    path: '/v1/platforms/:platformKey',
    summary: 'Deactivate a platform (soft).',
  },
  {
    step: 'activate',
    method: 'post',
    path: '/v1/platforms/:platformKey/activate',
    summary: 'Activate a platform. 409 PLATFORM_ARCHIVED when archived.',
  },
  {
    step: 'archive',
    method: 'post',
    path: '/v1/platforms/:platformKey/archive',
    summary: 'Archive an inactive platform (409 otherwise). Idempotent.',
  },
  {
    step: 'restore',
    method: 'post',
    path: '/v1/platforms/:platformKey/restore',
    summary: 'Restore an archived platform (as inactive). Idempotent.',
  },
];

const lifecycleOperations = lifecycle.map(({ step, method, path, summary }) =>
  defineOperation({
    auth: PLATFORMS_ADMIN,
    response: { kind: 'json', status: 200 },
    operationId: `${step}Platform`,
    method,
    path,
    summary,
    tags,
    params: PlatformKeyParams,
    responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
    handler: async ({ params, caller, requestId, services }) => {
      const { registry, onboarding } = services.clients;
      const request = {
        context: requestContextOf(caller, requestId),
        platformKey: params.platformKey,
      };
      const answer =
        step === 'deactivate'
          ? await registry.deactivatePlatform(request)
          : step === 'activate'
            ? await registry.activatePlatform(request)
            : step === 'archive'
              ? await registry.archivePlatform(request)
              : await registry.restorePlatform(request);
      return await platformJson(onboarding, answer.platform);
    },
  }),
);

const createPlatformCredential = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 201 },
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
  handler: async ({ params, body, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.createPlatformCredential({
      context: requestContextOf(caller, requestId),
      platformKey: params.platformKey,
      kind: body.kind,
      redirectPairId: body.kind === 'bff' ? body.redirectPairId : undefined,
    });
    return await credentialResponseJson(onboarding, answer);
  },
});

const rotatePlatformCredential = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
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
  handler: async ({ params, body, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.rotatePlatformCredential({
      context: requestContextOf(caller, requestId),
      platformKey: params.platformKey,
      credentialId: params.credentialId,
      revokePreviousImmediately: body?.revokePreviousImmediately ?? false,
      rotateClientId: body?.rotateClientId ?? false,
    });
    return await credentialResponseJson(onboarding, answer);
  },
});

const revokePreviousPlatformCredentialSecret = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'revokePreviousPlatformCredentialSecret',
  method: 'delete',
  path: '/v1/platforms/:platformKey/credentials/:credentialId/previous-secret',
  summary: "End a rotated key's grace period: its previous secret stops working.",
  tags,
  params: CredentialParams,
  responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
  handler: async ({ params, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.revokePreviousPlatformCredentialSecret({
      context: requestContextOf(caller, requestId),
      platformKey: params.platformKey,
      credentialId: params.credentialId,
    });
    return await platformJson(onboarding, answer.platform);
  },
});

const deletePlatformCredential = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'deletePlatformCredential',
  method: 'delete',
  path: '/v1/platforms/:platformKey/credentials/:credentialId',
  summary: 'Delete a platform key.',
  description: '409 for the last BFF key of an active platform.',
  tags,
  params: CredentialParams,
  responses: { 200: json('The platform.', PlatformJson), ...adminErrorResponses(404, 409) },
  handler: async ({ params, caller, requestId, services }) => {
    const { registry, onboarding } = services.clients;
    const answer = await registry.deletePlatformCredential({
      context: requestContextOf(caller, requestId),
      platformKey: params.platformKey,
      credentialId: params.credentialId,
    });
    return await platformJson(onboarding, answer.platform);
  },
});

/** Spec 4.10: every operation of the platform registry. */
export const platformOperations: readonly AnyOperation[] = [
  listPlatforms,
  createPlatform,
  getPlatform,
  updatePlatform,
  ...lifecycleOperations,
  createPlatformCredential,
  rotatePlatformCredential,
  revokePreviousPlatformCredentialSecret,
  deletePlatformCredential,
];
