import type { Client } from '@connectrpc/connect';
import type { OnboardingService, RegistryService } from '@gateway/contracts';
import type { Keyring } from '@gateway/crypto';
import type { Database } from '@gateway/db';
import type { DiscoveryCache, JwksCache } from '@gateway/oidc';
import type { IdentityServiceClient } from './identity-service-client.js';
import type { AuthFlowStore } from './store/auth-flow-store.js';
import type { UserStatusWatch } from './user-status-watch.js';

export type AuthFlowSettings = {
  /** AUTH_CALLBACK_URL: the redirect URI of every environment's gateway client. */
  callbackUrl: string;
  /** `{base_url}`, for `{base_url}/v1/auth/logged-out`. */
  baseUrl: string;
  handoffTtlSeconds: number;
  /** Spec 8: about 10 minutes. */
  transactionTtlSeconds: number;
  /** Spec: "not shown"; see docs/decisions.md. */
  sessionTtlSeconds: number;
  /** Lower-cased PLATFORM_ADMIN_BOOTSTRAP_EMAILS. */
  bootstrapEmails: readonly string[];
  accountCenterUrl: string | undefined;
  identityPostLogoutRedirectUri: string | undefined;
  identityTimeoutMs: number;
  /** IDENTITY_ISSUER: the deployment environment's issuer; its users may hold roles. */
  deploymentIssuer: string;
  /**
   * ADMIN_POWER_CONSOLE_ONLY: only sessions of admin console platforms (and of the gateway
   * itself) carry their permissions (platform-session-policy.ts).
   */
  adminPowerConsoleOnly: boolean;
};

/** Everything the auth-flow service needs, handed in by its main or the all-in-one process. */
export type AuthFlowDeps = {
  db: Database;
  store: AuthFlowStore;
  /** GATEWAY_ENCRYPTION_KEYS: PKCE verifiers, ID tokens, pending session tokens, logout state. */
  keyring: Keyring;
  registry: Client<typeof RegistryService>;
  onboarding: Client<typeof OnboardingService>;
  discovery: DiscoveryCache;
  jwks: JwksCache;
  settings: AuthFlowSettings;
  /**
   * The identity service API (spec 4.15); absent when IDENTITY_SERVICE_URL or
   * IDENTITY_SERVICE_KEY is not configured (callers answer IDENTITY_SERVICE_NOT_CONFIGURED).
   */
  identityService?: IdentityServiceClient | undefined;
  /**
   * Which users are not ACTIVE, followed in memory: a session's user status needs
   * no query while it is live. Absent or `unknown`: the status is read from the row.
   */
  userStatus?: UserStatusWatch | undefined;
  now?: () => Date;
};
