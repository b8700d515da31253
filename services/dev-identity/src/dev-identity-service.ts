import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JWK } from 'jose';
import { openAccountDirectory, type AccountDirectory } from './account-directory.js';
import { createAccountPages, type AccountPages } from './account-page.js';
import {
  assertValidOptions,
  type DevAccountView,
  type DevIdentityServiceOptions,
  type DevSigningAlg,
} from './dev-identity-options.js';
import { createEnvironmentProvider, type EnvironmentProvider } from './environment-provider.js';
import { fullRequestUrl, RequestRejected, sendEmpty, sendJson, sendPage } from './http-io.js';
import { handleInteraction, type InteractionAction } from './interaction-routes.js';
import { createInternalUsersApi, internalApiPrefix } from './internal-users-api.js';
import { renderErrorPage } from './provider-pages.js';
import { createOnboardingPages, onboardingPath } from './onboarding-page/onboarding-routes.js';
import { loadSigningKeys } from './signing-keys.js';

export type DevIdentityService = {
  /**
   * A Node request handler for everything under `/api/auth` (one OpenID Provider per
   * environment at `/api/auth/env/<KEY>`, with its sign-in, registration and sign-out pages),
   * `/env/<KEY>/onboarding` (the onboarding page), `/account` and `/internal/v1`. Any other
   * path goes to `next`; without it, `/favicon.ico` answers 204 and the rest 404.
   *
   * It routes on the full original path: `req.originalUrl` when set (Express sets it, so
   * `app.use(service.handle)` or `app.use('/api/auth', service.handle)` both work), otherwise
   * `req.url` (a bare `http.createServer(service.handle)`). The service must be reached at
   * `publicOrigin`: oidc-provider builds its endpoint URLs from the request's Host header.
   */
  handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void;
  /** `<publicOrigin>/api/auth/env/<KEY>` */
  issuer(environmentKey: string): string;
  /** The environment's accounts, without password material. */
  accounts(environmentKey: string): DevAccountView[];
  /** Stops answering (503); nothing else runs in the background. */
  close(): Promise<void>;
};

const environmentRoute = /^\/api\/auth\/env\/([^/]+)(?:\/|$)/;
const interactionRoute = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|register|abort))?$/;

/**
 * The development identity service of the embedded default (architecture: "Two ways to run"):
 * a real OpenID Provider per identity environment, built on oidc-provider, with its own
 * sign-in and registration pages, an account page and the internal users API.
 */
export async function createDevIdentityService(
  options: DevIdentityServiceOptions,
): Promise<DevIdentityService> {
  assertValidOptions(options);
  const publicOrigin = new URL(options.publicOrigin).origin;
  const signingAlg = options.signingAlg ?? 'EdDSA';
  const [signingKeys, directory] = await Promise.all([
    loadSigningKeys(signingAlg, options.keyStore),
    openAccountDirectory({
      environmentKeys: options.environments.map((environment) => environment.key),
      seed: options.accounts,
      store: options.accountStore,
    }),
  ]);
  const environments = await startEnvironments(options, {
    publicOrigin,
    signingAlg,
    signingKeys,
    directory,
  });
  const parts: ServiceParts = {
    environments,
    directory,
    accountPages: createAccountPages({ environments, directory, csrfKey: randomBytes(32) }),
    onboardingPages: createOnboardingPages({
      gatewayBaseUrl: (options.gatewayBaseUrl ?? publicOrigin).replace(/\/+$/, ''),
    }),
    internalUsersApi: createInternalUsersApi({
      environments,
      directory,
      serviceKey: options.serviceKey,
    }),
  };
  let closed = false;

  return {
    handle(req, res, next) {
      const url = fullRequestUrl(req);
      const work = routeFor(parts, { req, res, url });
      if (work === undefined) {
        if (next !== undefined) next();
        else if (url.pathname === '/favicon.ico') answerWithoutIcon(res);
        else notFound(res);
        return;
      }
      if (closed) {
        sendJson(res, 503, { code: 'SERVICE_UNAVAILABLE', message: 'The service is closed.' });
        return;
      }
      Promise.resolve()
        .then(work)
        .catch((error: unknown) => answerFailure(res, error));
    },
    issuer(environmentKey) {
      const environment = environments.get(environmentKey);
      if (environment === undefined) throw new Error(`No environment ${environmentKey}`);
      return environment.issuer;
    },
    accounts: (environmentKey) => directory.list(environmentKey),
    async close() {
      closed = true;
    },
  };
}

/** One OpenID Provider per environment, sharing the signing keys and the cookie keys. */
async function startEnvironments(
  options: DevIdentityServiceOptions,
  shared: {
    publicOrigin: string;
    signingAlg: DevSigningAlg;
    signingKeys: JWK[];
    directory: AccountDirectory;
  },
): Promise<Map<string, EnvironmentProvider>> {
  const { publicOrigin, signingAlg, signingKeys, directory } = shared;
  // Sessions live in memory, so cookies need not outlive the process.
  const cookieKeys = [randomBytes(32).toString('base64url')];
  const environments = new Map<string, EnvironmentProvider>();
  for (const environment of options.environments) {
    environments.set(
      environment.key,
      await createEnvironmentProvider({
        environment,
        publicOrigin,
        audience: options.audience,
        signingAlg,
        signingKeys,
        cookieKeys,
        directory,
      }),
    );
  }
  return environments;
}

/** What the service's routes answer with. */
type ServiceParts = {
  environments: ReadonlyMap<string, EnvironmentProvider>;
  directory: AccountDirectory;
  accountPages: AccountPages;
  onboardingPages: ReturnType<typeof createOnboardingPages>;
  internalUsersApi: ReturnType<typeof createInternalUsersApi>;
};

type Exchange = { req: IncomingMessage; res: ServerResponse; url: URL };
type Work = () => Promise<void> | void;

/** The work for a request, or undefined when the path is not the service's. */
function routeFor(parts: ServiceParts, exchange: Exchange): Work | undefined {
  const { req, res, url } = exchange;
  const path = url.pathname;
  if (path === internalApiPrefix || path.startsWith(`${internalApiPrefix}/`)) {
    return () => parts.internalUsersApi(req, res, url);
  }
  if (path === '/account') {
    return allow(req, res, 'GET', () => parts.accountPages.show(req, res, url));
  }
  if (path === '/account/password') {
    return allow(req, res, 'POST', () => parts.accountPages.changePassword(req, res, url));
  }
  const onboarding = onboardingPath.exec(path);
  if (onboarding !== null) return onboardingRoute(parts, exchange, onboarding);
  if (path !== '/api/auth' && !path.startsWith('/api/auth/')) return undefined;
  return providerRoute(parts, exchange);
}

/** `/env/<KEY>/onboarding` and its script, for a known environment. */
function onboardingRoute(
  parts: ServiceParts,
  { req, res, url }: Exchange,
  match: RegExpExecArray,
): Work {
  const environment = parts.environments.get(match[1] ?? '');
  if (environment === undefined) return () => notFound(res);
  const onboardingEnvironment = { key: environment.environment.key, label: environment.label };
  const asset = match[2];
  return allow(req, res, 'GET', () =>
    asset === undefined
      ? parts.onboardingPages.show(res, url, onboardingEnvironment)
      : parts.onboardingPages.script(res, asset),
  );
}

/** An environment's own sign-in and registration pages, else its OpenID Provider. */
function providerRoute(parts: ServiceParts, exchange: Exchange): Work {
  const { req, res, url } = exchange;
  const environment = parts.environments.get(environmentRoute.exec(url.pathname)?.[1] ?? '');
  if (environment === undefined) return () => notFound(res);
  const interaction = interactionRoute.exec(url.pathname.slice(environment.mountPath.length));
  if (interaction === null) return () => environment.handle(req, res, url);
  const uid = interaction[1] ?? '';
  const action = (interaction[2] ?? 'show') as InteractionAction;
  return allow(req, res, action === 'show' ? 'GET' : 'POST', () =>
    handleInteraction(environment, parts.directory, exchange, uid, action),
  );
}

/** The work when the method fits, else a 405 answer. */
function allow(
  req: IncomingMessage,
  res: ServerResponse,
  method: 'GET' | 'POST',
  work: () => Promise<void>,
): () => Promise<void> | void {
  const accepted = method === 'GET' ? ['GET', 'HEAD'] : ['POST'];
  if (accepted.includes(req.method ?? 'GET')) return work;
  return () => {
    res.setHeader('allow', accepted.join(', '));
    sendPage(res, 405, renderErrorPage({ error: 'Method not allowed' }));
  };
}

/** Browsers ask every host for an icon; the service has none, and says so without a 404. */
function answerWithoutIcon(res: ServerResponse): void {
  sendEmpty(res, 204, { 'cache-control': 'public, max-age=86400' });
}

function notFound(res: ServerResponse): void {
  sendPage(res, 404, renderErrorPage({ error: 'Not found' }));
}

function answerFailure(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof RequestRejected) {
    sendPage(res, error.status, renderErrorPage({ error: error.message }));
    return;
  }
  console.error('dev-identity: request failed', error);
  sendPage(res, 500, renderErrorPage({ error: 'The identity service failed' }));
}
