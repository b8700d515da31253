import type { JWK } from 'jose';

/** The grants a development client may use at the token endpoint. */
export type DevGrantType = 'authorization_code' | 'client_credentials' | 'refresh_token';

/**
 * A confidential client of one identity environment (client_secret_basic). Every registered
 * client is first-party: consent is granted without asking the user.
 */
export type DevClient = {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: DevGrantType[];
  /**
   * Where the provider posts a logout token when a session the client signed in with ends
   * (OpenID Connect Back-Channel Logout 1.0): the client's `backchannel_logout_uri`, with
   * `backchannel_logout_session_required`, so its ID tokens and logout tokens carry `sid`.
   */
  backchannelLogoutUri?: string;
  /**
   * Scopes the client may request. Default: `openid profile email offline_access` for a
   * client with `authorization_code`, otherwise the machine scopes (`platforms:admin
   * onboarding:schema:read onboarding:schema:write`).
   */
  scopes?: string[];
};

/** One identity environment: one issuer at `<publicOrigin>/api/auth/env/<key>`. */
export type DevEnvironment = {
  /** `^[A-Z][A-Z0-9_]{1,31}$`, equal to the gateway's environmentKey (spec 2.4). */
  key: string;
  displayName: string;
  clients: DevClient[];
};

export type DevAccountStatus = 'active' | 'suspended';

/**
 * An account of one environment. The same e-mail address in two environments is two
 * unrelated accounts (spec 1, rule 3).
 */
export type DevAccount = {
  environmentKey: string;
  /**
   * The OIDC `sub`. Seed accounts without one get a stable UUID derived from the environment
   * key and the e-mail address; registered accounts get a random UUID.
   */
  subject?: string;
  email: string;
  /** Plain-text password of a seed account. Hashed on start, never saved. */
  password?: string;
  /** `scrypt$N$r$p$<salt>$<hash>`, as the service saves it. */
  passwordHash?: string;
  emailVerified: boolean;
  name?: string;
  picture?: string;
  /** Default 'active'. A suspended account cannot sign in. */
  status?: DevAccountStatus;
};

/** An account as `DevIdentityService.accounts()` lists it: no password material. */
export type DevAccountView = {
  environmentKey: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  picture?: string;
  status: DevAccountStatus;
};

/** Somewhere to keep a list across restarts (a JSON file in the embedded default). */
export type DevStore<T> = {
  /** `undefined` when nothing was saved yet. */
  load(): Promise<T[] | undefined>;
  save(items: T[]): Promise<void>;
};

export type DevSigningAlg = 'EdDSA' | 'RS256';

export type DevIdentityServiceOptions = {
  /** e.g. `http://localhost:8080`; issuers are `${publicOrigin}/api/auth/env/${KEY}`. */
  publicOrigin: string;
  environments: DevEnvironment[];
  /** Seed accounts; merged into what `accountStore` holds (stored accounts win). */
  accounts: DevAccount[];
  /**
   * The gateway's public base URL, which the onboarding page calls (`/v1/onboarding/...`)
   * and sends the browser back to (`/v1/auth/resume`). Default: `publicOrigin`, as in the
   * embedded default, where the service is mounted on the gateway's own origin. Set it when
   * the service runs on its own origin (DEV_IDENTITY_GATEWAY_BASE_URL of `main.ts`).
   */
  gatewayBaseUrl?: string;
  /** Resource indicator that yields JWT access tokens (IDENTITY_ACCESS_TOKEN_AUDIENCE). */
  audience: string;
  /** IDENTITY_SERVICE_KEY (>= 32 characters); without it the internal users API answers 503. */
  serviceKey?: string;
  /** Default 'EdDSA'. */
  signingAlg?: DevSigningAlg;
  /** Private signing keys (JWK with kid, alg, use). In memory when absent. */
  keyStore?: DevStore<JWK>;
  /** Accounts, including registrations and suspensions. In memory when absent. */
  accountStore?: DevStore<DevAccount>;
};

export const environmentKeyPattern = /^[A-Z][A-Z0-9_]{1,31}$/;

/**
 * Checks the options once, at construction, and names the bad setting. Account details are
 * checked by the account directory.
 */
export function assertValidOptions(options: DevIdentityServiceOptions): void {
  const fail = (setting: string, rule: string): never => {
    throw new Error(`createDevIdentityService: ${setting} ${rule}`);
  };
  if (!URL.canParse(options.publicOrigin)) fail('publicOrigin', 'must be an absolute URL');
  const origin = new URL(options.publicOrigin);
  if (origin.protocol !== 'http:' && origin.protocol !== 'https:') {
    fail('publicOrigin', 'must be an http(s) URL');
  }
  if (origin.origin !== options.publicOrigin.replace(/\/$/, '')) {
    fail('publicOrigin', `must be an origin without path, query or credentials (${origin.origin})`);
  }
  if (options.gatewayBaseUrl !== undefined) {
    const base = URL.canParse(options.gatewayBaseUrl) ? new URL(options.gatewayBaseUrl) : undefined;
    if (base === undefined || (base.protocol !== 'http:' && base.protocol !== 'https:')) {
      fail('gatewayBaseUrl', 'must be an absolute http(s) URL');
    } else if (
      base.username !== '' ||
      base.password !== '' ||
      base.search !== '' ||
      base.hash !== ''
    ) {
      fail('gatewayBaseUrl', 'must not have credentials, a query or a fragment');
    }
  }
  if (options.audience.trim() === '') fail('audience', 'must not be empty');
  if (options.serviceKey !== undefined && options.serviceKey.length < 32) {
    fail('serviceKey', 'must be at least 32 characters');
  }
  if (options.environments.length === 0) fail('environments', 'must name at least one');
  const keys = new Set<string>();
  options.environments.forEach((environment, index) => {
    const setting = `environments[${index}]`;
    if (!environmentKeyPattern.test(environment.key)) {
      fail(`${setting}.key`, `"${environment.key}" must match ${environmentKeyPattern}`);
    }
    if (keys.has(environment.key)) fail(`${setting}.key`, `"${environment.key}" is repeated`);
    keys.add(environment.key);
    const clientIds = new Set<string>();
    environment.clients.forEach((client, clientIndex) => {
      const clientSetting = `${setting}.clients[${clientIndex}]`;
      if (clientIds.has(client.clientId)) {
        fail(`${clientSetting}.clientId`, `"${client.clientId}" is repeated`);
      }
      clientIds.add(client.clientId);
      if (client.clientSecret.length < 16) {
        fail(`${clientSetting}.clientSecret`, 'must be at least 16 characters');
      }
      if (client.grantTypes.length === 0) fail(`${clientSetting}.grantTypes`, 'must not be empty');
      if (client.grantTypes.includes('authorization_code') && client.redirectUris.length === 0) {
        fail(`${clientSetting}.redirectUris`, 'must not be empty with authorization_code');
      }
      const logoutUri = client.backchannelLogoutUri;
      const logoutProtocol =
        logoutUri !== undefined && URL.canParse(logoutUri) ? new URL(logoutUri).protocol : '';
      if (logoutUri !== undefined && logoutProtocol !== 'http:' && logoutProtocol !== 'https:') {
        fail(`${clientSetting}.backchannelLogoutUri`, 'must be an absolute http(s) URL');
      }
    });
  });
}
