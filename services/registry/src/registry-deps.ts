import type { Keyring } from '@gateway/crypto';
import type { Database } from '@gateway/db';

export type IdentityTier = 'development' | 'staging' | 'production';

/** The deployment (PROD) identity environment, which comes from configuration (spec 2.4). */
export type DeploymentEnvironmentConfig = {
  issuer: string;
  oidcClientId: string | undefined;
  oidcClientSecretConfigured: boolean;
  /** IDENTITY_OIDC_CLIENT_SECRET, handed only to the auth-flow service (GetEnvironmentClient). */
  oidcClientSecret: string | undefined;
  postLogoutRedirectUri: string | undefined;
  tier: IdentityTier;
};

/** Everything the registry service needs, handed in by its main or the all-in-one process. */
export type RegistryDeps = {
  db: Database;
  deployment: DeploymentEnvironmentConfig;
  /** Keyring derived from IDENTITY_ENVIRONMENT_SECRET_KEY; absent when it is not configured. */
  environmentSecrets: Keyring | undefined;
  /** Deadline of each identity-provider call made by `validate`. */
  identityTimeoutMs: number;
  now?: () => Date;
};

export const DEPLOYMENT_ENVIRONMENT_KEY = 'PROD';
