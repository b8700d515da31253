import type { JsonObject } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { RegistryService, RequestContext } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { ChangeContext } from './identity-environments.js';
import {
  activatePlatform,
  archivePlatform,
  createPlatform,
  deactivatePlatform,
  getPlatform,
  getPlatformSessionPolicy,
  listPlatforms,
  restorePlatform,
  updatePlatform,
  type OnboardingMode,
  type PlatformView,
} from './platforms.js';
import type { RegistryDeps } from './registry-deps.js';
import { changeContextOf, issuedCredentialMessage, platformMessage } from './registry-messages.js';

type Rpcs = ServiceImpl<typeof RegistryService>;

type PlatformRpcs = Pick<
  Rpcs,
  | 'listPlatforms'
  | 'getPlatform'
  | 'getPlatformSessionPolicy'
  | 'createPlatform'
  | 'updatePlatform'
  | 'deactivatePlatform'
  | 'activatePlatform'
  | 'archivePlatform'
  | 'restorePlatform'
>;

/** The RPCs that list, read, register, change and retire platforms. */
export function platformRpcs(deps: RegistryDeps): PlatformRpcs {
  return {
    listPlatforms: listPlatformsRpc(deps),
    getPlatform: async (request) => ({
      platform: platformMessage(await getPlatform(deps.db.knex, request.platformKey)),
    }),
    getPlatformSessionPolicy: async (request) => {
      const policy = await getPlatformSessionPolicy(deps.db.knex, request.platformKey);
      return { ...policy, sessionsNotBeforeMs: BigInt(policy.sessionsNotBeforeMs) };
    },
    createPlatform: createPlatformRpc(deps),
    updatePlatform: updatePlatformRpc(deps),
    deactivatePlatform: platformLifecycleRpc(deps, deactivatePlatform),
    activatePlatform: platformLifecycleRpc(deps, activatePlatform),
    archivePlatform: platformLifecycleRpc(deps, archivePlatform),
    restorePlatform: platformLifecycleRpc(deps, restorePlatform),
  };
}

const modes = new Set<string>(['none', 'platform', 'central']);

function modeOf(value: string): OnboardingMode {
  if (!modes.has(value))
    throw new GatewayError(
      'VALIDATION_ERROR',
      'defaultOnboardingMode must be none, platform or central.',
    );
  return value as OnboardingMode;
}

function listPlatformsRpc(deps: RegistryDeps): Rpcs['listPlatforms'] {
  return async (request) => {
    const views = await listPlatforms(deps, {
      ...(request.identityEnvironmentKey === undefined
        ? {}
        : { identityEnvironmentKey: request.identityEnvironmentKey }),
      archived: request.archived,
    });
    return { items: views.map(platformMessage) };
  };
}

function createPlatformRpc(deps: RegistryDeps): Rpcs['createPlatform'] {
  return async (request) => {
    const { view, issued } = await createPlatform(deps, changeContextOf(request.context), {
      platformKey: request.platformKey,
      displayName: request.displayName,
      identityEnvironmentKey: request.identityEnvironmentKey,
      redirectPairs: request.redirectPairs,
      defaultOnboardingMode:
        request.defaultOnboardingMode === undefined
          ? undefined
          : modeOf(request.defaultOnboardingMode),
      centralOnboardingEnabled: request.centralOnboardingEnabled,
      platformOnboardingPath: request.platformOnboardingPath,
      metadata: request.metadata ?? {},
      adminConsole: request.adminConsole,
    });
    return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
  };
}

/**
 * Changes only the fields the request carries; redirect pairs only when it asks to replace
 * them, and a cleared onboarding path becomes null.
 */
function updatePlatformRpc(deps: RegistryDeps): Rpcs['updatePlatform'] {
  return async (request) => {
    const { view, issued } = await updatePlatform(
      deps,
      changeContextOf(request.context),
      request.platformKey,
      {
        ...(request.displayName === undefined ? {} : { displayName: request.displayName }),
        ...(request.identityEnvironmentKey === undefined
          ? {}
          : { identityEnvironmentKey: request.identityEnvironmentKey }),
        ...(request.replaceRedirectPairs ? { redirectPairs: request.redirectPairs } : {}),
        ...(request.defaultOnboardingMode === undefined
          ? {}
          : { defaultOnboardingMode: modeOf(request.defaultOnboardingMode) }),
        ...(request.centralOnboardingEnabled === undefined
          ? {}
          : { centralOnboardingEnabled: request.centralOnboardingEnabled }),
        ...(request.platformOnboardingPath === undefined
          ? {}
          : { platformOnboardingPath: request.platformOnboardingPath.value ?? null }),
        ...(request.metadata === undefined ? {} : { metadata: request.metadata as JsonObject }),
        ...(request.adminConsole === undefined ? {} : { adminConsole: request.adminConsole }),
      },
    );
    return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
  };
}

/** Deactivates, activates, archives or restores one platform and answers its new state. */
function platformLifecycleRpc(
  deps: RegistryDeps,
  change: (
    deps: RegistryDeps,
    context: ChangeContext,
    platformKey: string,
  ) => Promise<PlatformView>,
) {
  return async (request: { context?: RequestContext; platformKey: string }) => ({
    platform: platformMessage(
      await change(deps, changeContextOf(request.context), request.platformKey),
    ),
  });
}
