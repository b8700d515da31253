import type { ServiceImpl } from '@connectrpc/connect';
import type { RegistryService, RequestContext } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import {
  createEnvironment,
  getEnvironment,
  listEnvironments,
  resolveIssuer,
  setEnvironmentActive,
  updateEnvironment,
  validateEnvironment,
  type EnvironmentView,
} from './identity-environments.js';
import type { IdentityTier, RegistryDeps } from './registry-deps.js';
import { changeContextOf, environmentMessage } from './registry-messages.js';

type Rpcs = ServiceImpl<typeof RegistryService>;

type EnvironmentRpcs = Pick<
  Rpcs,
  | 'listIdentityEnvironments'
  | 'getIdentityEnvironment'
  | 'createIdentityEnvironment'
  | 'updateIdentityEnvironment'
  | 'deactivateIdentityEnvironment'
  | 'activateIdentityEnvironment'
  | 'validateIdentityEnvironment'
  | 'resolveIssuer'
>;

/** The RPCs that list, read, change and check identity environments. */
export function environmentRpcs(deps: RegistryDeps): EnvironmentRpcs {
  return {
    listIdentityEnvironments: async () => ({
      items: (await listEnvironments(deps)).map((view) => environmentMessageOf(deps, view)),
    }),
    getIdentityEnvironment: (request) => environmentResponse(deps, request.environmentKey),
    createIdentityEnvironment: createIdentityEnvironmentRpc(deps),
    updateIdentityEnvironment: updateIdentityEnvironmentRpc(deps),
    deactivateIdentityEnvironment: setEnvironmentActiveRpc(deps, false),
    activateIdentityEnvironment: setEnvironmentActiveRpc(deps, true),
    validateIdentityEnvironment: async (request) => {
      const report = await validateEnvironment(deps, request.environmentKey);
      return { environmentKey: request.environmentKey, ok: report.ok, checks: report.checks };
    },
    resolveIssuer: resolveIssuerRpc(deps),
  };
}

const tiers = new Set<string>(['development', 'staging', 'production']);

function tierOf(value: string): IdentityTier {
  if (!tiers.has(value))
    throw new GatewayError('VALIDATION_ERROR', 'tier must be development, staging or production.');
  return value as IdentityTier;
}

function environmentMessageOf(deps: RegistryDeps, view: EnvironmentView) {
  return environmentMessage(view, deps.deployment.oidcClientSecretConfigured);
}

async function environmentResponse(deps: RegistryDeps, key: string) {
  return { environment: environmentMessageOf(deps, await getEnvironment(deps, key)) };
}

function createIdentityEnvironmentRpc(deps: RegistryDeps): Rpcs['createIdentityEnvironment'] {
  return async (request) => {
    const view = await createEnvironment(deps, changeContextOf(request.context), {
      environmentKey: request.environmentKey,
      displayName: request.displayName,
      tier: tierOf(request.tier),
      issuer: request.issuer,
      oidcClientId: request.oidcClientId,
      oidcClientSecret: request.oidcClientSecret,
      postLogoutRedirectUri: request.postLogoutRedirectUri,
      metadata: request.metadata ?? {},
    });
    return environmentResponse(deps, view.environment_key);
  };
}

/** Changes only the fields the request carries; a cleared secret or logout URI becomes null. */
function updateIdentityEnvironmentRpc(deps: RegistryDeps): Rpcs['updateIdentityEnvironment'] {
  return async (request) => {
    await updateEnvironment(deps, changeContextOf(request.context), request.environmentKey, {
      ...(request.displayName === undefined ? {} : { displayName: request.displayName }),
      ...(request.tier === undefined ? {} : { tier: tierOf(request.tier) }),
      ...(request.issuer === undefined ? {} : { issuer: request.issuer }),
      ...(request.oidcClientId === undefined ? {} : { oidcClientId: request.oidcClientId }),
      ...(request.oidcClientSecret === undefined
        ? {}
        : { oidcClientSecret: request.oidcClientSecret.value ?? null }),
      ...(request.postLogoutRedirectUri === undefined
        ? {}
        : { postLogoutRedirectUri: request.postLogoutRedirectUri.value ?? null }),
      ...(request.metadata === undefined ? {} : { metadata: request.metadata }),
    });
    return environmentResponse(deps, request.environmentKey);
  };
}

/** Activates or deactivates one environment (ActivateIdentityEnvironment, Deactivate…). */
function setEnvironmentActiveRpc(deps: RegistryDeps, active: boolean) {
  return async (request: { context?: RequestContext; environmentKey: string }) => {
    await setEnvironmentActive(
      deps,
      changeContextOf(request.context),
      request.environmentKey,
      active,
    );
    return environmentResponse(deps, request.environmentKey);
  };
}

function resolveIssuerRpc(deps: RegistryDeps): Rpcs['resolveIssuer'] {
  return async (request) => {
    const environment = await resolveIssuer(deps, request.issuer);
    if (environment === undefined) return { found: false };
    return {
      found: true,
      environmentKey: environment.environment_key,
      active: environment.active,
      deployment: environment.source === 'deployment',
      issuer: environment.issuer,
      tier: environment.tier,
    };
  };
}
