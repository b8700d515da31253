import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JWK } from 'jose';
import type {
  Account,
  ClientMetadata,
  Configuration,
  JWKS,
  KoaContextWithOIDC,
} from 'oidc-provider';
import type { AccountDirectory } from './account-directory.js';
import type { DevClient, DevEnvironment, DevSigningAlg } from './dev-identity-options.js';
import { constructProvider, type Provider, type ProviderErrors } from './oidc-provider-loader.js';
import { pageHeaders } from './page-layout.js';
import { renderErrorPage, renderLogoutPage, renderSignedOutPage } from './provider-pages.js';
import { SearchableMemoryStore } from '@gateway/oidc-memory-store';

/** Scopes of the machine (client_credentials) tokens the gateway's admin routes accept (spec 5). */
export const machineScopes = [
  'platforms:admin',
  'onboarding:schema:read',
  'onboarding:schema:write',
] as const;
const userScopes = ['openid', 'profile', 'email', 'offline_access'] as const;

/** What a JWT access token for the audience may carry in `scope`. */
const resourceServerScope = ['openid', 'profile', 'email', ...machineScopes].join(' ');

const tokenRoute = '/oauth2/token';
const authorizationRoute = '/auth';

const minute = 60;
const hour = 60 * minute;
const day = 24 * hour;

/** The issuer of one identity environment and what the service needs to reach into it. */
export type EnvironmentProvider = {
  environment: DevEnvironment;
  /** `<publicOrigin>/api/auth/env/<KEY>` */
  issuer: string;
  /** `/api/auth/env/<KEY>` */
  mountPath: string;
  /** "Display name (KEY)", shown on every page. */
  label: string;
  provider: Provider;
  /** oidc-provider's storage: sessions, grants and tokens, searchable by account. */
  store: SearchableMemoryStore;
  /** Hands a request for a path under `mountPath` to oidc-provider. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): void;
};

type EnvironmentProviderOptions = {
  environment: DevEnvironment;
  publicOrigin: string;
  audience: string;
  signingAlg: DevSigningAlg;
  signingKeys: JWK[];
  cookieKeys: string[];
  directory: AccountDirectory;
};

export async function createEnvironmentProvider(
  options: EnvironmentProviderOptions,
): Promise<EnvironmentProvider> {
  const { environment } = options;
  const mountPath = `/api/auth/env/${environment.key}`;
  const issuer = `${options.publicOrigin}${mountPath}`;
  const label = `${environment.displayName} (${environment.key})`;
  const store = new SearchableMemoryStore();
  const provider = await constructProvider(issuer, (errors) =>
    providerConfiguration(options, { mountPath, label, store, errors }),
  );
  const callback = provider.callback();
  return {
    environment,
    issuer,
    mountPath,
    label,
    provider,
    store,
    handle(req, res, url) {
      // oidc-provider builds its URLs from the mount path: it takes it from req.baseUrl when
      // req.originalUrl is absent. (Deriving it from originalUrl, as it would otherwise, finds
      // the wrong prefix for paths like `/auth/<uid>` under `/api/auth/...`.)
      const request = req as IncomingMessage & { originalUrl?: string; baseUrl?: string };
      delete request.originalUrl;
      request.baseUrl = mountPath;
      request.url = `${url.pathname.slice(mountPath.length) || '/'}${url.search}`;
      void callback(req, res);
    },
  };
}

type ProviderPlace = {
  mountPath: string;
  label: string;
  store: SearchableMemoryStore;
  errors: ProviderErrors;
};

/** oidc-provider's configuration for one environment: clients, keys, cookies, pages, tokens. */
function providerConfiguration(
  options: EnvironmentProviderOptions,
  { mountPath, label, store, errors }: ProviderPlace,
): Configuration {
  const { environment, directory } = options;
  return {
    adapter: store.adapterFor,
    clients: environment.clients.map((client) => clientMetadata(client, options.signingAlg)),
    jwks: { keys: options.signingKeys } as JWKS,
    findAccount: accountFinder(directory, environment.key),
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture'],
    },
    scopes: [...userScopes, ...machineScopes],
    // spec 4.1: `screen_hint=signup` opens the registration page instead of sign-in.
    extraParams: ['screen_hint'],
    // The ID token carries the scope's claims itself (the gateway reads no userinfo).
    conformIdTokenClaims: false,
    cookies: environmentCookies(environment.key, options.cookieKeys),
    pkce: { required: () => true },
    routes: { authorization: authorizationRoute, token: tokenRoute },
    interactions: {
      url: (_ctx, interaction) => `${mountPath}/interaction/${interaction.uid}`,
    },
    ttl: lifetimes,
    clientBasedCORS: () => false,
    renderError: (ctx, out) => {
      ctx.set(pageHeaders);
      ctx.body = renderErrorPage({
        environmentLabel: label,
        error: out.error,
        description: out.error_description,
      });
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: signOutPages(directory, environment.key, label),
      // A session that ends (signed out here, or at a client's request) is announced to each
      // client of it that registered a backchannelLogoutUri, before the browser is answered.
      backchannelLogout: { enabled: true },
      resourceIndicators: audienceTokens(options.audience, options.signingAlg, errors),
    },
    extraTokenClaims: emailClaims(directory, environment.key),
    fetch: toRegisteredClients,
  };
}

/**
 * The provider's outgoing requests (logout tokens) go to URLs its operator registered, and in
 * development those are on this machine (`http://localhost:...`). oidc-provider's guard
 * against requests to special-use addresses (loopback among them) is for URLs a client
 * registers itself, which this service does not allow; it is left out.
 */
const toRegisteredClients: Configuration['fetch'] = (input, init) => {
  const options: RequestInit & { dispatcher?: unknown } = { ...init };
  delete options.dispatcher;
  return fetch(input, options);
};

const lifetimes: Configuration['ttl'] = {
  AccessToken: 10 * minute,
  AuthorizationCode: minute,
  ClientCredentials: 10 * minute,
  IdToken: hour,
  Interaction: hour,
  // A working day: after it the browser signs in again.
  Session: 8 * hour,
  Grant: 14 * day,
  RefreshToken: 14 * day,
};

/** The environment's active accounts, with their email and profile claims. */
function accountFinder(directory: AccountDirectory, environmentKey: string) {
  return (_ctx: KoaContextWithOIDC, sub: string): Account | undefined => {
    // A suspended account is no account: its sessions log out and its refresh tokens fail.
    const account = directory.findActive(environmentKey, sub);
    if (account === undefined) return undefined;
    return {
      accountId: sub,
      claims: () => ({
        sub,
        email: account.email,
        email_verified: account.emailVerified,
        ...(account.name === undefined ? {} : { name: account.name }),
        ...(account.picture === undefined ? {} : { picture: account.picture }),
      }),
    };
  };
}

function environmentCookies(environmentKey: string, keys: string[]): Configuration['cookies'] {
  return {
    keys,
    // Every environment shares the host, so each needs its own cookie names.
    names: {
      session: `idp_${environmentKey}_session`,
      interaction: `idp_${environmentKey}_interaction`,
      resume: `idp_${environmentKey}_resume`,
    },
    long: { httpOnly: true, sameSite: 'lax' },
    short: { httpOnly: true, sameSite: 'lax' },
  };
}

type Features = NonNullable<Configuration['features']>;

/** The sign-out confirmation (submitted at once with a validated hint) and signed-out pages. */
function signOutPages(
  directory: AccountDirectory,
  environmentKey: string,
  label: string,
): Features['rpInitiatedLogout'] {
  return {
    enabled: true,
    logoutSource: (ctx, form) => {
      const accountId = ctx.oidc.session?.accountId;
      const account =
        accountId === undefined ? undefined : directory.findActive(environmentKey, accountId);
      ctx.set(pageHeaders);
      ctx.body = renderLogoutPage({
        environmentLabel: label,
        providerForm: form,
        signedInAs: account?.email,
        // oidc-provider has validated the hint (signature, audience) by now.
        autoSubmit: typeof ctx.oidc.params?.id_token_hint === 'string',
      });
    },
    postLogoutSuccessSource: (ctx) => {
      ctx.set(pageHeaders);
      ctx.body = renderSignedOutPage(label);
    },
  };
}

/**
 * Without `resource` the access token is opaque, as spec 5 describes; with the audience it is
 * a JWT. A code granted for the audience keeps it at the token endpoint.
 */
function audienceTokens(
  audience: string,
  alg: DevSigningAlg,
  errors: ProviderErrors,
): Features['resourceIndicators'] {
  return {
    enabled: true,
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx, resourceIndicator) => {
      if (resourceIndicator !== audience) throw new errors.InvalidTarget();
      return {
        scope: resourceServerScope,
        audience,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 10 * minute,
        jwt: { sign: { alg } },
      };
    },
  };
}

/**
 * A user's access token names its e-mail address (the gateway tells users from machines by
 * it, spec 5); a machine token has none.
 */
function emailClaims(
  directory: AccountDirectory,
  environmentKey: string,
): Configuration['extraTokenClaims'] {
  return (_ctx, token) => {
    const accountId = 'accountId' in token ? token.accountId : undefined;
    if (accountId === undefined || !token.scopes.has('email')) return undefined;
    const account = directory.findActive(environmentKey, accountId);
    if (account === undefined) return undefined;
    return { email: account.email, email_verified: account.emailVerified };
  };
}

function clientMetadata(client: DevClient, alg: DevSigningAlg): ClientMetadata {
  const codeFlow = client.grantTypes.includes('authorization_code');
  const scopes = client.scopes ?? (codeFlow ? userScopes : machineScopes);
  return {
    client_id: client.clientId,
    client_secret: client.clientSecret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: client.grantTypes,
    response_types: codeFlow ? ['code'] : [],
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: alg,
    scope: scopes.join(' '),
    ...(client.backchannelLogoutUri === undefined
      ? {}
      : {
          backchannel_logout_uri: client.backchannelLogoutUri,
          // Logout tokens, and the ID tokens before them, carry the session's `sid`.
          backchannel_logout_session_required: true,
        }),
  };
}
