import type { GatewayConfig } from '@gateway/config';
import { createKeyringFromSecret } from '@gateway/crypto';
import type { Database } from '@gateway/db';
import type { RegistryDeps } from './registry-deps.js';

/** The registry's dependencies from the parsed configuration (spec 2.4, 2.15). */
export function registryDepsFromConfig(config: GatewayConfig, db: Database): RegistryDeps {
  return {
    db,
    deployment: {
      issuer: config.identityIssuer,
      oidcClientId: config.identityOidcClientId,
      oidcClientSecretConfigured: config.identityOidcClientSecret !== undefined,
      oidcClientSecret: config.identityOidcClientSecret,
      postLogoutRedirectUri: config.identityPostLogoutRedirectUri,
      tier: config.identityDeploymentTier,
    },
    environmentSecrets:
      config.identityEnvironmentSecretKey === undefined
        ? undefined
        : createKeyringFromSecret(
            config.identityEnvironmentSecretKey,
            'identity-environment-client-secret',
          ),
    identityTimeoutMs: config.serviceCallTimeoutMs,
  };
}
