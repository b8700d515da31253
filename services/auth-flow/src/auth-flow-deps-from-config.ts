import type { Client } from '@connectrpc/connect';
import type { GatewayConfig } from '@gateway/config';
import type { OnboardingService, RegistryService } from '@gateway/contracts';
import { createKeyring, parseEncryptionKeys } from '@gateway/crypto';
import type { Database } from '@gateway/db';
import { createDiscoveryCache, createJwksCache } from '@gateway/oidc';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import {
  createIdentityServiceClient,
  IDENTITY_SERVICE_TIMEOUT_MS,
} from './identity-service-client.js';
import type { AuthFlowStore } from './store/auth-flow-store.js';
import { createUserStatusWatch } from './user-status-watch.js';

/** Spec: gateway session lifetime "not shown"; see docs/decisions.md. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
/** Spec 8: about 10 minutes. */
export const TRANSACTION_TTL_SECONDS = 10 * 60;

export function authFlowDepsFromConfig(
  config: GatewayConfig,
  parts: {
    db: Database;
    store: AuthFlowStore;
    registry: Client<typeof RegistryService>;
    onboarding: Client<typeof OnboardingService>;
    /** Told when the user-status watch is down or cannot start (it retries by itself). */
    onUserStatusWatchError?: (error: unknown) => void;
  },
): AuthFlowDeps {
  if (config.encryptionKeys === undefined) throw new Error('GATEWAY_ENCRYPTION_KEYS is required');
  const { onUserStatusWatchError, ...services } = parts;
  return {
    ...services,
    // Starts watching at once; stops with close() or when the database is closed.
    userStatus: createUserStatusWatch(parts.db, {
      ...(onUserStatusWatchError === undefined ? {} : { onError: onUserStatusWatchError }),
    }),
    keyring: createKeyring(parseEncryptionKeys(config.encryptionKeys)),
    discovery: createDiscoveryCache({ timeoutMs: config.serviceCallTimeoutMs }),
    jwks: createJwksCache({ timeoutMs: config.serviceCallTimeoutMs }),
    settings: {
      callbackUrl: config.authCallbackUrl,
      baseUrl: config.baseUrl,
      handoffTtlSeconds: config.authHandoffTtlSeconds,
      transactionTtlSeconds: TRANSACTION_TTL_SECONDS,
      sessionTtlSeconds: SESSION_TTL_SECONDS,
      bootstrapEmails: config.platformAdminBootstrapEmails,
      accountCenterUrl: config.accountCenterUrl,
      identityPostLogoutRedirectUri: config.identityPostLogoutRedirectUri,
      identityTimeoutMs: config.serviceCallTimeoutMs,
      deploymentIssuer: config.identityIssuer,
      adminPowerConsoleOnly: config.adminPowerConsoleOnly,
    },
    identityService:
      config.identityServiceUrl === undefined || config.identityServiceKey === undefined
        ? undefined
        : createIdentityServiceClient({
            baseUrl: config.identityServiceUrl,
            key: config.identityServiceKey,
            timeoutMs: IDENTITY_SERVICE_TIMEOUT_MS,
          }),
  };
}
