import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, SignJWT, type JWK } from 'jose';
import type {
  Account,
  ClientMetadata,
  Configuration,
  JWKS,
  KoaContextWithOIDC,
} from 'oidc-provider';
import { SearchableMemoryStore } from '@gateway/oidc-memory-store';
import { createCookieJar, type CookieJar } from './cookie-jar.js';
import {
  createTestSigningKey,
  type TestSigningAlg,
  type TestSigningKey,
} from './test-signing-key.js';

export type TestClient = {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** Scopes the client may request; any of the provider's scopes when omitted. */
  scopes?: string[];
};

export type TestAccount = {
  accountId: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  picture?: string;
};

export type TestOpenIdProviderOptions = {
  /** Default 'PROD'; the issuer is `http://127.0.0.1:<port>/api/auth/env/<KEY>`. */
  environmentKey?: string;
  /** Resource indicator that yields JWT access tokens; default 'http://localhost:8080'. */
  audience?: string;
  /**
   * Confidential clients (client_secret_basic). When omitted: a gateway client
   * ('test-gateway', code flow) and a machine client ('test-machine') allowed the scopes
   * `platforms:admin onboarding:schema:read onboarding:schema:write`.
   */
  clients?: TestClient[];
  /** When omitted: one verified account, 'user-1' <user-1@example.test>. */
  accounts?: TestAccount[];
  /** Default RS256. */
  signingAlg?: TestSigningAlg;
  /** Claims added to every access token issued to a client (user and machine tokens). */
  extraClaims?: (clientId: string, kind: 'machine' | 'user') => Record<string, unknown>;
  /** Discovery reports this issuer instead of the real one. */
  advertisedIssuer?: string;
  /** Discovery does not advertise end_session_endpoint. */
  omitEndSessionEndpoint?: boolean;
  /** jwks_uri answers `{ "keys": [] }`. */
  emptyJwks?: boolean;
  /**
   * Rewrites the claims of every ID token the token endpoint issues; the token is signed
   * again with the provider's own key (a provider that issues wrong ID tokens).
   */
  idTokenClaims?: (claims: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Discovery does not advertise `authorization_response_iss_parameter_supported` (RFC 9207);
   * authorization responses still carry `iss`.
   */
  omitAuthorizationResponseIssSupport?: boolean;
  /**
   * OpenID Connect Back-Channel Logout: every code-flow client registers a
   * `backchannel_logout_uri` of the provider's own (with `backchannel_logout_session_required`,
   * so ID tokens carry `sid`), where the provider's logout tokens are kept for the test
   * (`logoutTokens()`) instead of being delivered.
   */
  captureLogoutTokens?: boolean;
  /**
   * Access tokens of the authorization code grant: 'jwt' (default, signed like the ID token)
   * or 'opaque' (a random handle, as many providers issue when no API is named). The bench
   * uses 'opaque': the gateway never reads them, and each one signed was a second RSA
   * signature per sign-in on the provider's CPU. Machine tokens stay JWTs.
   */
  userAccessTokenFormat?: 'jwt' | 'opaque';
};

export type TestOpenIdProvider = {
  issuer: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  environmentKey: string;
  audience: string;
  clients: TestClient[];
  accounts: TestAccount[];
  /** A real client_credentials grant at the token endpoint (Basic auth). */
  machineToken(options?: { clientId?: string; scope?: string; resource?: string }): Promise<string>;
  /**
   * A real authorization code + PKCE flow through the provider's own development login and
   * consent pages, driven with fetch and a cookie jar.
   */
  userTokens(options: {
    accountId: string;
    scope?: string;
    resource?: string;
    clientId?: string;
    nonce?: string;
  }): Promise<{ accessToken: string; idToken: string }>;
  /**
   * A browser for this provider with its own cookie jar: signs in from an authorize URL made
   * by someone else (the gateway) and follows an end-session URL, each until the provider
   * sends the browser away from its own origin; answers that URL.
   */
  browser(): TestBrowser;
  /** The public signing keys as published at jwks_uri (even with `emptyJwks`). */
  signingKeys(): JWK[];
  /**
   * Signs any claims with the provider's own key, with its alg and kid in the header (plus
   * `header`): a token the provider could have issued, whatever it says. With `key`, signed
   * with that key instead under the provider's kid: a forgery.
   */
  sign(
    claims: Record<string, unknown>,
    options?: { header?: Record<string, unknown>; key?: TestSigningKey },
  ): Promise<string>;
  /** With `captureLogoutTokens`: the logout tokens the provider has sent, oldest first. */
  logoutTokens(): string[];
  close(): Promise<void>;
};

export type TestBrowser = {
  signIn(authorizeUrl: string, accountId: string): Promise<URL>;
  endSession(logoutUrl: string): Promise<URL>;
};

export const testMachineScopes = [
  'platforms:admin',
  'onboarding:schema:read',
  'onboarding:schema:write',
] as const;

const resourceScope = ['openid', 'profile', 'email', ...testMachineScopes].join(' ');
const tokenRoute = '/oauth2/token';
const authorizationRoute = '/auth';

/**
 * A real OpenID Provider (oidc-provider) on 127.0.0.1 with a fresh signing key, mounted
 * under `/api/auth/env/<KEY>` like the identity service. Start one per test file.
 */
export async function startTestOpenIdProvider(
  options: TestOpenIdProviderOptions = {},
): Promise<TestOpenIdProvider> {
  const environmentKey = options.environmentKey ?? 'PROD';
  const audience = options.audience ?? 'http://localhost:8080';
  const alg = options.signingAlg ?? 'RS256';
  const clients = options.clients ?? defaultClients();
  const accounts = options.accounts ?? [
    { accountId: 'user-1', email: 'user-1@example.test', emailVerified: true, name: 'User One' },
  ];
  const key = await createTestSigningKey(alg);

  // The issuer names the port, so the server listens before the provider exists.
  const listening = await listenOnLoopback();
  const { server, origin } = listening;
  const mountPath = `/api/auth/env/${environmentKey}`;
  const issuer = `${origin}${mountPath}`;

  // oidc-provider announces its development-only defaults on the console when it is loaded
  // and constructed; those notices are expected here and only clutter test output.
  const capture =
    options.captureLogoutTokens === true ? createLogoutTokenCapture(origin) : undefined;
  const provider = await withoutProviderNotices(async () => {
    const oidc = await import('oidc-provider');
    const configuration = providerConfiguration({
      clients,
      accounts,
      key,
      audience,
      options,
      backchannelLogoutUri: capture?.uri,
      invalidTarget: () => new oidc.errors.InvalidTarget(),
    });
    return new oidc.default(issuer, configuration);
  });
  provider.use(brokenVariants(key, options));
  const mounted = mountedAt(mountPath, provider.callback());
  listening.handle = capture === undefined ? mounted : capture.before(mounted);

  const site = { issuer, audience, clients };
  return {
    issuer,
    origin,
    environmentKey,
    audience,
    clients,
    accounts,
    machineToken: (request = {}) => machineToken(site, request),
    browser() {
      const jar = createCookieJar();
      const leavesProvider = (url: URL) => url.origin !== origin;
      return {
        signIn: (authorizeUrl, accountId) =>
          followProviderPages({ startUrl: authorizeUrl, accountId, jar, isDone: leavesProvider }),
        endSession: (logoutUrl) =>
          followProviderPages({ startUrl: logoutUrl, accountId: '', jar, isDone: leavesProvider }),
      };
    },
    userTokens: (request) => userTokens(site, request),
    signingKeys: () => [{ ...key.publicJwk }],
    sign: (claims, signOptions = {}) => {
      const signer = signOptions.key ?? key;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: signer.alg, kid: key.kid, ...signOptions.header })
        .sign(signer.privateKey);
    },
    logoutTokens: () => [...(capture?.tokens ?? [])],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** An HTTP server on 127.0.0.1 whose handler is set later; until then it answers 503. */
async function listenOnLoopback(): Promise<{
  server: Server;
  origin: string;
  handle: RequestListener;
}> {
  const listening = {
    server: createServer((req, res) => listening.handle(req, res)),
    origin: '',
    handle: ((_req, res) => {
      res.statusCode = 503;
      res.end();
    }) as RequestListener,
  };
  await new Promise<void>((resolve, reject) => {
    listening.server.once('error', reject);
    listening.server.listen(0, '127.0.0.1', () => resolve());
  });
  listening.origin = `http://127.0.0.1:${(listening.server.address() as AddressInfo).port}`;
  return listening;
}

/**
 * The provider mounted like express does it: it sees the path below the mount point and
 * reads the full one from originalUrl to build its own URLs. Other paths are 404.
 */
function mountedAt(mountPath: string, callback: RequestListener): RequestListener {
  return (req, res) => {
    const url = req.url ?? '/';
    if (url !== mountPath && !url.startsWith(`${mountPath}/`) && !url.startsWith(`${mountPath}?`)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    Object.assign(req, { originalUrl: url });
    req.url = url.slice(mountPath.length);
    if (!req.url.startsWith('/')) req.url = `/${req.url}`;
    void callback(req, res);
  };
}

/**
 * Where a provider with `captureLogoutTokens` sends its logout tokens: a path of its own
 * server, outside the issuer, that keeps each token posted and answers 200.
 */
function createLogoutTokenCapture(origin: string) {
  const path = '/captured-backchannel-logout';
  const tokens: string[] = [];
  return {
    uri: `${origin}${path}`,
    tokens,
    before(next: RequestListener): RequestListener {
      return (req, res) => {
        if (req.method !== 'POST' || req.url !== path) {
          next(req, res);
          return;
        }
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          const token = new URLSearchParams(body).get('logout_token');
          if (token !== null) tokens.push(token);
          res.statusCode = token === null ? 400 : 200;
          res.end();
        });
      };
    },
  };
}

type ProviderSetup = {
  clients: TestClient[];
  accounts: TestAccount[];
  key: TestSigningKey;
  audience: string;
  options: TestOpenIdProviderOptions;
  /** With `captureLogoutTokens`: every code-flow client's backchannel_logout_uri. */
  backchannelLogoutUri: string | undefined;
  /** oidc-provider's invalid_target error (the module loads with the provider). */
  invalidTarget: () => Error;
};

/** oidc-provider's configuration: the clients, accounts, key, scopes and dev pages. */
function providerConfiguration(setup: ProviderSetup): Configuration {
  const alg = setup.key.alg;
  const accountsById = new Map(setup.accounts.map((account) => [account.accountId, account]));
  return {
    // Not the development adapter's 1,000-entry LRU: it evicts in-flight codes under load.
    adapter: new SearchableMemoryStore().adapterFor,
    clients: setup.clients.map((client) => clientMetadata(client, alg, setup.backchannelLogoutUri)),
    jwks: { keys: [setup.key.privateJwk] } as JWKS,
    findAccount: accountFinder(accountsById),
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture'],
    },
    scopes: ['openid', 'offline_access', 'profile', 'email', ...testMachineScopes],
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    routes: { token: tokenRoute, authorization: authorizationRoute },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      ClientCredentials: 600,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
    clientBasedCORS: () => false,
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!DOCTYPE html><title>Error</title><pre>${escapeHtml(JSON.stringify(out))}</pre>`;
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: signOutPages,
      backchannelLogout: { enabled: setup.backchannelLogoutUri !== undefined },
      resourceIndicators: resourceIndicators(setup),
    },
    extraTokenClaims: extraTokenClaims(accountsById, setup.options),
    // Logout tokens go to the provider's own loopback server, which oidc-provider's guard
    // against special-use addresses would refuse.
    fetch: (input, init) => {
      const request: RequestInit & { dispatcher?: unknown } = { ...init };
      delete request.dispatcher;
      return fetch(input, request);
    },
  };
}

/** The accounts as oidc-provider finds them, with their email and profile claims. */
function accountFinder(accountsById: ReadonlyMap<string, TestAccount>) {
  return (_ctx: KoaContextWithOIDC, sub: string): Account | undefined => {
    const account = accountsById.get(sub);
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

type Features = NonNullable<Configuration['features']>;

/** RP-initiated logout with a plain confirmation page and a plain signed-out page. */
const signOutPages: Features['rpInitiatedLogout'] = {
  enabled: true,
  logoutSource: (ctx, form) => {
    ctx.type = 'html';
    ctx.body = `<!DOCTYPE html><title>Sign out</title>${form}<button form="op.logoutForm" type="submit" name="logout" value="yes">Sign out</button>`;
  },
  postLogoutSuccessSource: (ctx) => {
    ctx.type = 'html';
    ctx.body = '<!DOCTYPE html><title>Signed out</title><p>Signed out.</p>';
  },
};

/** Access tokens for any absolute resource URL, the audience by default. */
function resourceIndicators(setup: ProviderSetup): Features['resourceIndicators'] {
  return {
    enabled: true,
    defaultResource: (_ctx, _client, oneOf) => oneOf?.[0] ?? setup.audience,
    useGrantedResource: () => true,
    getResourceServerInfo: (ctx, resourceIndicator) => {
      // Any absolute URL is accepted, so a test can obtain a token for another audience.
      if (!URL.canParse(resourceIndicator)) throw setup.invalidTarget();
      const userToken = ctx.oidc.params?.grant_type === 'authorization_code';
      return {
        scope: resourceScope,
        audience: resourceIndicator,
        accessTokenFormat:
          userToken && setup.options.userAccessTokenFormat === 'opaque' ? 'opaque' : 'jwt',
        accessTokenTTL: 600,
        jwt: { sign: { alg: setup.key.alg } },
      };
    },
  };
}

/** The account's email in access tokens with the email scope, and the test's extra claims. */
function extraTokenClaims(
  accountsById: ReadonlyMap<string, TestAccount>,
  options: TestOpenIdProviderOptions,
): Configuration['extraTokenClaims'] {
  return (_ctx, token) => {
    const claims: Record<string, unknown> = {};
    const accountId = 'accountId' in token ? token.accountId : undefined;
    if (accountId !== undefined) {
      const account = accountsById.get(accountId);
      if (account !== undefined && token.scopes.has('email')) {
        claims.email = account.email;
        claims.email_verified = account.emailVerified;
      }
    }
    if (options.extraClaims !== undefined && token.clientId !== undefined) {
      Object.assign(
        claims,
        options.extraClaims(token.clientId, accountId === undefined ? 'machine' : 'user'),
      );
    }
    return claims;
  };
}

/**
 * Post-processing middleware (runs around the provider's routes) for the broken variants:
 * rewritten ID tokens, a different advertised issuer, missing discovery entries, no keys.
 */
function brokenVariants(key: TestSigningKey, options: TestOpenIdProviderOptions) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    const { idTokenClaims } = options;
    if (ctx.method === 'POST' && ctx.path === tokenRoute && idTokenClaims !== undefined) {
      ctx.body = await withIdTokenClaims(ctx.body, key, idTokenClaims);
      return;
    }
    if (ctx.method !== 'GET' || ctx.status !== 200) return;
    if (ctx.path === '/.well-known/openid-configuration') {
      const document = { ...(ctx.body as Record<string, unknown>) };
      if (options.advertisedIssuer !== undefined) document.issuer = options.advertisedIssuer;
      if (options.omitEndSessionEndpoint === true) delete document.end_session_endpoint;
      if (options.omitAuthorizationResponseIssSupport === true) {
        delete document.authorization_response_iss_parameter_supported;
      }
      ctx.body = document;
    } else if (ctx.path === '/jwks' && options.emptyJwks === true) {
      ctx.body = { keys: [] };
    }
  };
}

/** What the token helpers need to know of the provider. */
type ProviderSite = { issuer: string; audience: string; clients: TestClient[] };

/** The named client, or else the first one fit for machine tokens or for the code flow. */
function findClient(
  clients: TestClient[],
  clientId: string | undefined,
  purpose: 'machine' | 'user',
): TestClient {
  const client =
    clientId !== undefined
      ? clients.find((candidate) => candidate.clientId === clientId)
      : purpose === 'machine'
        ? (clients.find((candidate) => candidate.scopes !== undefined) ?? clients[0])
        : clients.find((candidate) => candidate.redirectUris.length > 0);
  if (client === undefined) {
    throw new Error(`The test OpenID Provider has no ${clientId ?? `${purpose} client`}`);
  }
  return client;
}

async function tokenRequest(
  site: ProviderSite,
  client: TestClient,
  form: URLSearchParams,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${site.issuer}${tokenRoute}`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(client),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form,
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) {
    throw new Error(
      `The test OpenID Provider refused the token request: ${response.status} ${JSON.stringify(body)}`,
    );
  }
  return body;
}

async function machineToken(
  site: ProviderSite,
  request: { clientId?: string; scope?: string; resource?: string },
): Promise<string> {
  const client = findClient(site.clients, request.clientId, 'machine');
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    resource: request.resource ?? site.audience,
  });
  const scope = request.scope ?? client.scopes?.join(' ');
  if (scope !== undefined && scope !== '') form.set('scope', scope);
  const body = await tokenRequest(site, client, form);
  return stringField(body, 'access_token');
}

async function userTokens(
  site: ProviderSite,
  request: Parameters<TestOpenIdProvider['userTokens']>[0],
): Promise<{ accessToken: string; idToken: string }> {
  const client = findClient(site.clients, request.clientId, 'user');
  const redirectUri = client.redirectUris[0] as string;
  const resource = request.resource ?? site.audience;
  const code = await authorize({
    issuer: site.issuer,
    client,
    redirectUri,
    resource,
    accountId: request.accountId,
    scope: request.scope ?? 'openid profile email',
    nonce: request.nonce,
  });
  const body = await tokenRequest(
    site,
    client,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code: code.code,
      redirect_uri: redirectUri,
      code_verifier: code.verifier,
      resource,
    }),
  );
  return {
    accessToken: stringField(body, 'access_token'),
    idToken: stringField(body, 'id_token'),
  };
}

/** A token response whose ID token carries `rewrite`'s claims, signed again with `key`. */
async function withIdTokenClaims(
  body: unknown,
  key: TestSigningKey,
  rewrite: (claims: Record<string, unknown>) => Record<string, unknown>,
): Promise<unknown> {
  if (typeof body !== 'object' || body === null) return body;
  const response = body as Record<string, unknown>;
  if (typeof response.id_token !== 'string') return body;
  const claims = decodeJwt(response.id_token) as Record<string, unknown>;
  const idToken = await new SignJWT(rewrite(claims))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(key.privateKey);
  return { ...response, id_token: idToken };
}

function defaultClients(): TestClient[] {
  return [
    {
      clientId: 'test-gateway',
      clientSecret: randomBytes(24).toString('base64url'),
      redirectUris: ['http://localhost:8080/v1/auth/callback'],
      postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
    },
    {
      clientId: 'test-machine',
      clientSecret: randomBytes(24).toString('base64url'),
      redirectUris: [],
      postLogoutRedirectUris: [],
      scopes: [...testMachineScopes],
    },
  ];
}

function clientMetadata(
  client: TestClient,
  alg: TestSigningAlg,
  backchannelLogoutUri: string | undefined,
): ClientMetadata {
  const codeFlow = client.redirectUris.length > 0;
  return {
    ...(codeFlow && backchannelLogoutUri !== undefined
      ? {
          backchannel_logout_uri: backchannelLogoutUri,
          backchannel_logout_session_required: true,
        }
      : {}),
    client_id: client.clientId,
    client_secret: client.clientSecret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: codeFlow ? ['authorization_code', 'client_credentials'] : ['client_credentials'],
    response_types: codeFlow ? ['code'] : [],
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: alg,
    ...(client.scopes === undefined ? {} : { scope: client.scopes.join(' ') }),
  };
}

/** Walks the authorization endpoint, the dev login form and the dev consent form. */
async function authorize(request: {
  issuer: string;
  client: TestClient;
  redirectUri: string;
  resource: string;
  accountId: string;
  scope: string;
  nonce: string | undefined;
}): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const start = new URL(`${request.issuer}${authorizationRoute}`);
  start.search = new URLSearchParams({
    client_id: request.client.clientId,
    response_type: 'code',
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state,
    resource: request.resource,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
  }).toString();

  const next = await followProviderPages({
    startUrl: start.href,
    accountId: request.accountId,
    jar: createCookieJar(),
    isDone: (url) => `${url.origin}${url.pathname}` === request.redirectUri,
  });
  const error = next.searchParams.get('error');
  if (error !== null) {
    throw new Error(
      `The test OpenID Provider answered ${error}: ${next.searchParams.get('error_description') ?? ''}`,
    );
  }
  if (next.searchParams.get('state') !== state) throw new Error('state mismatch');
  const code = next.searchParams.get('code');
  if (code === null) throw new Error('The test OpenID Provider returned no code');
  return { code, verifier };
}

/** What followProviderPages needs of an HTTP client; the global fetch is one. */
export type ProviderPageFetch = (
  url: string,
  init: {
    method: string;
    redirect: 'manual';
    headers: Record<string, string>;
    body?: URLSearchParams | undefined;
  },
) => Promise<{
  status: number;
  headers: Pick<Headers, 'get' | 'getSetCookie'>;
  text(): Promise<string>;
  body: { cancel(): Promise<void> } | null;
}>;

/**
 * Follows the redirects of an oidc-provider with its development interaction pages and
 * answers its pages as a user would: the dev login (any password), consent, and the
 * end-session confirmation; stops at the first redirect for which `isDone` is true and
 * answers it. The cookie jar keeps the identity session, so a second sign-in with the same
 * jar goes straight back. Used by the test provider's browser and by the bench.
 */
export async function followProviderPages(request: {
  startUrl: string;
  accountId: string;
  jar: CookieJar;
  isDone: (url: URL) => boolean;
  /** The HTTP client (default the global fetch; the bench passes a cheaper one). */
  fetch?: ProviderPageFetch;
}): Promise<URL> {
  const { jar } = request;
  const send = request.fetch ?? fetch;
  let url = request.startUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    const cookie = jar.headerFor(url);
    const response = await send(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        ...(cookie === undefined ? {} : { cookie }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: form,
    });
    jar.store(url, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (request.isDone(next)) return next;
      url = next.href;
      form = undefined;
      continue;
    }
    const html = await response.text();
    const page = response.status === 200 ? parseProviderForm(html) : undefined;
    if (page === undefined) {
      throw new Error(`Unexpected page from the OpenID Provider: ${response.status} ${html}`);
    }
    url = new URL(page.action, url).href;
    form =
      page.prompt === 'login'
        ? new URLSearchParams({ prompt: 'login', login: request.accountId, password: 'any' })
        : page.prompt === 'logout'
          ? new URLSearchParams({ ...page.hidden, logout: 'yes' })
          : new URLSearchParams({ prompt: page.prompt });
  }
  throw new Error('The OpenID Provider did not finish');
}

// The dev interaction pages (login and consent) are one form each, posting `prompt` back;
// the end-session confirmation is a form with hidden fields (xsrf) and a `logout` button.
function parseProviderForm(
  html: string,
): { action: string; prompt: string; hidden: Record<string, string> } | undefined {
  const action = /<form[^>]*\saction="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) return undefined;
  const hidden: Record<string, string> = {};
  for (const match of html.matchAll(
    /<input[^>]*type="hidden"[^>]*name="([^"]*)"[^>]*value="([^"]*)"/g,
  )) {
    hidden[unescapeHtml(match[1] ?? '')] = unescapeHtml(match[2] ?? '');
  }
  const prompt = /<input[^>]*name="prompt"[^>]*value="([^"]*)"/.exec(html)?.[1];
  if (prompt !== undefined)
    return { action: unescapeHtml(action), prompt: unescapeHtml(prompt), hidden };
  if (/name="logout"/.test(html)) return { action: unescapeHtml(action), prompt: 'logout', hidden };
  return undefined;
}

function basicAuthorization(client: TestClient): string {
  // RFC 6749 section 2.3.1: both parts are form-urlencoded before base64.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  const pair = `${encode(client.clientId)}:${encode(client.clientSecret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new Error(`The token response has no ${name}`);
  return value;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, decimal: string) => String.fromCharCode(Number(decimal)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const providerNotice = /oidc-provider (WARNING|NOTICE):/;

// Providers started concurrently (Promise.all in a beforeAll) share one patch of the console,
// restored when the last of them is constructed.
let quieted: { count: number; warn: Console['warn']; info: Console['info'] } | undefined;

async function withoutProviderNotices<T>(work: () => Promise<T>): Promise<T> {
  if (quieted === undefined) {
    const { warn, info } = console;
    const quiet =
      (write: (...args: unknown[]) => void) =>
      (...args: unknown[]) => {
        if (typeof args[0] === 'string' && providerNotice.test(args[0])) return;
        write.apply(console, args);
      };
    quieted = { count: 0, warn, info };
    console.warn = quiet(warn);
    console.info = quiet(info);
  }
  quieted.count += 1;
  try {
    return await work();
  } finally {
    quieted.count -= 1;
    if (quieted.count === 0) {
      console.warn = quieted.warn;
      console.info = quieted.info;
      quieted = undefined;
    }
  }
}
