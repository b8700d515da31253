import type { ServiceImpl } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { listEnvironments } from './identity-environments.js';
import { environmentClient, prepareLogin, resolveReturnTo } from './login-preparation.js';
import { activeReturnUrlOrigins } from './platforms.js';
import type { RegistryDeps } from './registry-deps.js';

type Rpcs = ServiceImpl<typeof RegistryService>;

type SignInRpcs = Pick<
  Rpcs,
  'prepareLogin' | 'resolveReturnTo' | 'getEnvironmentClient' | 'getCorsOrigins'
>;

/** The RPCs the sign-in flow and the edge ask before sending a browser anywhere. */
export function signInRpcs(deps: RegistryDeps): SignInRpcs {
  return {
    prepareLogin: prepareLoginRpc(deps),
    resolveReturnTo: async (request) => {
      const resolved = await resolveReturnTo(deps, {
        platformKey: request.platformKey,
        returnTo: request.returnTo,
      });
      return { returnTo: resolved.returnTo, redirectPairId: resolved.pairId };
    },
    getEnvironmentClient: getEnvironmentClientRpc(deps),
    getCorsOrigins: async () => {
      const environments = await listEnvironments(deps);
      const issuerOrigins = environments
        .filter((env) => env.active)
        .map((env) => new URL(env.issuer).origin);
      return {
        origins: [...new Set([...issuerOrigins, ...(await activeReturnUrlOrigins(deps.db.knex))])],
      };
    },
  };
}

/** The platform, redirect pair, return URL and onboarding mode of a sign-in about to start. */
function prepareLoginRpc(deps: RegistryDeps): Rpcs['prepareLogin'] {
  return async (request) => {
    const prepared = await prepareLogin(deps, {
      platformKey: request.platformKey,
      returnTo: request.returnTo,
      onboardingMode: request.onboardingMode,
    });
    return {
      platformId: prepared.view.platform.id,
      platformKey: prepared.view.platform.platform_key,
      displayName: prepared.view.platform.display_name,
      onboardingMode: prepared.onboardingMode,
      centralOnboardingEnabled: prepared.view.platform.central_onboarding_enabled,
      redirectPairId: prepared.pair.id,
      callbackUrl: prepared.pair.callbackUrl,
      returnTo: prepared.returnTo,
      environmentKey: prepared.view.environment.environment_key,
    };
  };
}

/** The OIDC client the gateway signs in with at one identity environment. */
function getEnvironmentClientRpc(deps: RegistryDeps): Rpcs['getEnvironmentClient'] {
  return async (request) => {
    const client = await environmentClient(deps, request.environmentKey);
    return {
      environmentKey: client.environment.environment_key,
      issuer: client.environment.issuer,
      tier: client.environment.tier,
      active: client.environment.active,
      deployment: client.environment.source === 'deployment',
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      ...(client.environment.post_logout_redirect_uri === null
        ? {}
        : { postLogoutRedirectUri: client.environment.post_logout_redirect_uri }),
    };
  };
}
