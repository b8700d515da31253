import { createClient, createRouterTransport, type Transport } from '@connectrpc/connect';
import { OnboardingService, RegistryService } from '@gateway/contracts';
import { createKeyring, generateEncryptionKeySpec, parseEncryptionKeys } from '@gateway/crypto';
import type { Database } from '@gateway/db';
import { createDiscoveryCache, createJwksCache } from '@gateway/oidc';
import type { AuthFlowDeps } from '../auth-flow-deps.js';
import type { AuthFlowStore } from '../store/auth-flow-store.js';
import type { UserStatusWatch } from '../user-status-watch.js';

/** Stands in for a service the code under test must not call: every call fails. */
const answersNothing = createRouterTransport(() => undefined);

/**
 * Auth-flow deps for service-level tests: the given database and store, a fresh keyring, and
 * the registry and onboarding services as the test's in-process stand-ins (services that do
 * not run in an auth-flow test), by default ones that answer nothing.
 */
export function testAuthFlowDeps(options: {
  db: Database;
  store: AuthFlowStore;
  registry?: Transport;
  onboarding?: Transport;
  userStatus?: UserStatusWatch;
}): AuthFlowDeps {
  return {
    db: options.db,
    store: options.store,
    ...(options.userStatus === undefined ? {} : { userStatus: options.userStatus }),
    keyring: createKeyring(parseEncryptionKeys(generateEncryptionKeySpec('k1'))),
    registry: createClient(RegistryService, options.registry ?? answersNothing),
    onboarding: createClient(OnboardingService, options.onboarding ?? answersNothing),
    discovery: createDiscoveryCache({ timeoutMs: 1_000 }),
    jwks: createJwksCache({ timeoutMs: 1_000 }),
    settings: {
      callbackUrl: 'https://gateway.example.com/v1/auth/callback',
      baseUrl: 'https://gateway.example.com',
      handoffTtlSeconds: 60,
      transactionTtlSeconds: 600,
      sessionTtlSeconds: 12 * 60 * 60,
      bootstrapEmails: [],
      accountCenterUrl: undefined,
      identityPostLogoutRedirectUri: undefined,
      identityTimeoutMs: 1_000,
      deploymentIssuer: 'https://id.example.com',
      adminPowerConsoleOnly: false,
    },
  };
}
