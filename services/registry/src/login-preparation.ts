import { DecryptionError } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';
import { decryptEnvironmentSecret, type EnvironmentRow } from './identity-environments.js';
import { getPlatform, type OnboardingMode, type PlatformView } from './platforms.js';
import type { RegistryDeps } from './registry-deps.js';
import { matchReturnTo, type RedirectPairForMatching } from './return-to.js';

export type PreparedLogin = {
  view: PlatformView;
  onboardingMode: OnboardingMode;
  pair: RedirectPairForMatching;
  returnTo: string;
};

function pairsForMatching(view: PlatformView): RedirectPairForMatching[] {
  return view.pairs.map((pair) => ({
    id: pair.id,
    returnUrl: pair.return_url,
    callbackUrl: pair.callback_url,
    isDefault: pair.is_default,
  }));
}

/**
 * Spec 4.1 steps 1-5, in order: the active platform, its onboarding mode (a query value is
 * only an assertion), central onboarding, a redirect pair and an active environment, then
 * returnTo against the pairs, whose callback must be served by a BFF key.
 */
export async function prepareLogin(
  deps: RegistryDeps,
  request: { platformKey: string; returnTo: string; onboardingMode: string | undefined },
): Promise<PreparedLogin> {
  const view = await getPlatform(deps.db.knex, request.platformKey).catch((error: unknown) => {
    if (error instanceof GatewayError && error.code === 'NOT_FOUND') {
      throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
    }
    throw error;
  });
  if (view.platform.status !== 'active')
    throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
  const registered = view.platform.default_onboarding_mode;
  if (request.onboardingMode !== undefined && request.onboardingMode !== registered) {
    throw new GatewayError(
      'FORBIDDEN',
      "onboardingMode differs from the platform's registered mode.",
    );
  }
  if (registered === 'central' && !view.platform.central_onboarding_enabled) {
    throw new GatewayError(
      'CENTRAL_ONBOARDING_DISABLED',
      'Central onboarding is disabled for this platform.',
    );
  }
  if (view.pairs.length === 0) {
    throw new GatewayError(
      'PLATFORM_CALLBACK_NOT_CONFIGURED',
      'The platform has no redirect pair.',
    );
  }
  if (!view.environment.active) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_INACTIVE',
      "The platform's identity environment is inactive.",
    );
  }
  const match = matchReturnTo(request.returnTo, pairsForMatching(view));
  const served = view.credentials.some(
    (credential) =>
      credential.kind === 'bff' &&
      view.pairs.find((pair) => pair.id === credential.redirect_pair_id)?.callback_url ===
        match.pair.callbackUrl,
  );
  if (!served) {
    throw new GatewayError(
      'PLATFORM_CREDENTIALS_NOT_CONFIGURED',
      'The callback of the matched redirect pair has no BFF key.',
    );
  }
  return { view, onboardingMode: registered, pair: match.pair, returnTo: match.returnTo };
}

/** Spec 4.6: logout's returnTo follows the start rules; without it, the default pair's return URL. */
export async function resolveReturnTo(
  deps: RegistryDeps,
  request: { platformKey: string; returnTo: string | undefined },
): Promise<{ returnTo: string; pairId: string }> {
  const view = await getPlatform(deps.db.knex, request.platformKey);
  const pairs = pairsForMatching(view);
  if (request.returnTo !== undefined) {
    const match = matchReturnTo(request.returnTo, pairs);
    return { returnTo: match.returnTo, pairId: match.pair.id };
  }
  const fallback = pairs.find((pair) => pair.isDefault);
  if (fallback === undefined)
    throw new GatewayError(
      'PLATFORM_CALLBACK_NOT_CONFIGURED',
      'The platform has no redirect pair.',
    );
  return { returnTo: new URL(fallback.returnUrl).href, pairId: fallback.id };
}

export type EnvironmentClient = {
  environment: EnvironmentRow;
  clientId: string;
  clientSecret: string;
};

/**
 * The gateway's OIDC client in an environment (spec 2.4): the deployment row's from
 * configuration, a database environment's with its stored secret decrypted.
 */
export async function environmentClient(
  deps: RegistryDeps,
  environmentKey: string,
): Promise<EnvironmentClient> {
  const environment = (await deps.db
    .knex('registry.identity_environments')
    .where({ environment_key: environmentKey })
    .first()) as EnvironmentRow | undefined;
  if (environment === undefined) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_NOT_CONFIGURED',
      `Identity environment ${environmentKey} no longer exists.`,
    );
  }
  let clientSecret: string | undefined;
  if (environment.source === 'deployment') {
    clientSecret = deps.deployment.oidcClientSecret;
  } else {
    try {
      clientSecret = decryptEnvironmentSecret(deps, environment);
    } catch (error) {
      if (!(error instanceof DecryptionError)) throw error;
      throw new GatewayError(
        'OIDC_CLIENT_NOT_CONFIGURED',
        'The stored client secret cannot be read with the current IDENTITY_ENVIRONMENT_SECRET_KEY; re-enter it.',
      );
    }
  }
  if (environment.oidc_client_id === '' || clientSecret === undefined) {
    throw new GatewayError(
      'OIDC_CLIENT_NOT_CONFIGURED',
      'The environment has no gateway client ID or secret.',
    );
  }
  return { environment, clientId: environment.oidc_client_id, clientSecret };
}
