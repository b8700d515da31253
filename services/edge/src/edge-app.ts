import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import proxyAddr from 'proxy-addr';
import type { GatewayConfig } from '@gateway/config';
import { createLocalChangeFeed, type ChangeFeed } from '@gateway/db';
import { createAccessTokenVerifier, createDiscoveryCache, createJwksCache } from '@gateway/oidc';
import {
  createHttpTracingMiddleware,
  createRequestIdMiddleware,
  createRequestLoggingMiddleware,
  type Logger,
} from '@gateway/telemetry';
import { createAuthentication } from './auth/authentication.js';
import { createIssuerResolver } from './auth/issuer-resolver.js';
import { createUserAuthentication } from './auth/user-authentication.js';
import { createCors } from './http/cors.js';
import { createErrorHandler, createUnmatchedRouteHandler } from './http/error-handler.js';
import { OperationCatalog } from './http/operation-catalog.js';
import { registerAccountRoutes } from './routes/account-routes.js';
import { registerAuditRoutes } from './routes/audit-routes.js';
import { createPlatformCredentialVerifier } from './http/basic-credentials.js';
import { createFastLane } from './http/fast-lane.js';
import { createLoadShedder } from './http/load-shedding.js';
import type { LeanContext } from './http/lean-operation.js';
import { createRateLimiter, registerRateLimits } from './http/rate-limit.js';
import { createMemoryRateLimitStore, type RateLimitStore } from './http/rate-limit-store.js';
import { createSecurityHeaders } from './http/security-headers.js';
import { registerAuthRoutes } from './routes/auth-routes.js';
import { registerDocsRoutes } from './routes/docs-routes.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import { registerIdentityEnvironmentRoutes } from './routes/identity-environment-routes.js';
import { registerGlobalFieldRoutes } from './routes/global-field-routes.js';
import { registerOnboardingFieldRoutes } from './routes/onboarding-field-routes.js';
import { registerOnboardingUserRoutes } from './routes/onboarding-user-routes.js';
import { registerPlatformRoutes } from './routes/platform-routes.js';
import { registerProfileRoutes } from './routes/profile-routes.js';
import { createLoginOperations } from './routes/login-operations.js';
import { registerUserAdminRoutes } from './routes/user-admin-routes.js';
import { announcingRegistryChanges } from './registry-changes.js';
import type { EdgeClients } from './service-clients.js';

export type EdgeAppOptions = {
  config: GatewayConfig;
  logger: Logger;
  clients: EdgeClients;
  /** Rate limit counters; default: in this process only (a single instance). */
  rateLimitStore?: RateLimitStore;
  /**
   * Where registry changes are announced and heard (issue 8): shared with the auth-flow
   * service in one process, or through Redis across processes. Default: this edge only.
   */
  changeFeed?: ChangeFeed;
};

/** The edge's request listener: the fast lane for the busiest operations, Express otherwise. */
export type EdgeApp = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The public edge: every route of the spec, validated with zod, described in
 * /openapi.json, answering errors with the spec's body. It keeps no state; the services do.
 */
export function createEdgeApp(options: EdgeAppOptions): EdgeApp {
  const { config, logger } = options;
  const feed = options.changeFeed ?? createLocalChangeFeed();
  const clients: EdgeClients = {
    ...options.clients,
    registry: announcingRegistryChanges(options.clients.registry, () => void feed.announce()),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // X-Forwarded-* are believed only from the configured proxies (issue 7); req.ip is then the
  // client's address as the nearest trusted proxy saw it, otherwise the connection's.
  const trustedProxies = config.trustedProxies.length > 0 ? [...config.trustedProxies] : false;
  app.set('trust proxy', trustedProxies);
  const trust = trustedProxies === false ? undefined : proxyAddr.compile(trustedProxies);
  app.use(createSecurityHeaders({ production: config.production }));
  app.use(createRequestIdMiddleware());
  app.use(createHttpTracingMiddleware());
  app.use(createRequestLoggingMiddleware(logger));

  // Spec 5: a Bearer token's issuer selects its identity environment through the registry;
  // discovery and JWKS of each issuer are fetched once and cached.
  const issuers = createIssuerResolver(clients.registry, { feed });
  const verifier = createAccessTokenVerifier({
    audience: config.accessTokenAudience,
    resolveIssuer: (issuer) => issuers.resolve(issuer),
    discovery: createDiscoveryCache({ timeoutMs: config.serviceCallTimeoutMs }),
    jwks: createJwksCache({ timeoutMs: config.serviceCallTimeoutMs }),
  });
  const cors = createCors({
    corsOrigins: config.corsOrigins,
    identityIssuer: config.identityIssuer,
    registry: clients.registry,
    logger,
  });
  const authentication = createAuthentication({
    verifier,
    userPermissions: async (token) =>
      (
        await clients.authFlow.provisionTokenUser({
          issuer: token.issuer,
          subject: token.subject ?? '',
          environmentKey: token.environmentKey,
          deployment: token.deployment,
          ...(token.email === undefined ? {} : { email: token.email }),
          emailVerified: token.emailVerified,
        })
      ).permissions,
    cookieSessions: {
      authFlow: clients.authFlow,
      isAllowedOrigin: (origin) => cors.isAllowedOrigin(origin),
    },
  });
  // A registry change is visible to the next request: the CORS allowlist is read again (on
  // every edge that hears the feed; issuer resolutions and verified keys drop themselves).
  feed.subscribe(() => cors.invalidate());

  // Browsers ask every host for an icon; the gateway has none, and says so without a 404.
  app.get('/favicon.ico', answerWithoutIcon);

  const catalog = new OperationCatalog();
  const router = express.Router();
  registerHealthRoutes(router, catalog, clients, { probeTimeoutMs: config.databaseTimeoutMs });
  registerDocsRoutes(router, catalog, { baseUrl: config.baseUrl });
  const registryRoutes = { clients, authentication };
  registerPlatformRoutes(router, catalog, registryRoutes);
  registerIdentityEnvironmentRoutes(router, catalog, registryRoutes);
  registerAuditRoutes(router, catalog, registryRoutes);
  registerUserAdminRoutes(router, catalog, registryRoutes);
  registerOnboardingFieldRoutes(router, catalog, registryRoutes);
  registerGlobalFieldRoutes(router, catalog, registryRoutes);
  const limiter = createRateLimiter({
    settings: {
      windowSeconds: config.rateLimitWindowSeconds,
      browserPerIp: config.rateLimitBrowserPerIp,
      exchangePerClient: config.rateLimitExchangePerClient,
      introspectPerClient: config.rateLimitIntrospectPerClient,
      serverPerIp: config.rateLimitServerPerIp,
    },
    store: options.rateLimitStore ?? createMemoryRateLimitStore(),
    logger,
  });
  registerRateLimits(router, limiter);
  const loginOperations = createLoginOperations(clients.authFlow);
  const lean: LeanContext = {
    credentials: createPlatformCredentialVerifier(clients.registry, { feed }),
    cookie: { secure: config.production },
  };
  registerAuthRoutes(router, catalog, {
    clients,
    loginOperations,
    lean,
    isAllowedOrigin: (origin) => cors.isAllowedOrigin(origin),
    secureCookies: config.production,
  });
  const userAuthentication = createUserAuthentication({
    verifier,
    authFlow: clients.authFlow,
    isAllowedOrigin: (origin) => cors.isAllowedOrigin(origin),
  });
  registerAccountRoutes(router, catalog, {
    clients,
    userAuthentication,
    secureCookies: config.production,
  });
  registerOnboardingUserRoutes(router, catalog, { clients, userAuthentication });
  registerProfileRoutes(router, catalog, { clients, userAuthentication, baseUrl: config.baseUrl });
  // Credentialed CORS for browser calls to the API (spec 2.15, 5); health and docs need none.
  app.use('/v1', cors.middleware);
  app.use(router);

  app.use(createUnmatchedRouteHandler(catalog));
  const errorPage = { accountUrl: config.accountCenterUrl };
  app.use(createErrorHandler(logger, errorPage));

  const fastLane = createFastLane({
    operations: loginOperations,
    context: lean,
    logger,
    production: config.production,
    limiter,
    shedder: createLoadShedder({
      maxInFlight: config.overloadMaxInFlight,
      production: config.production,
      logger,
    }),
    clientAddress: (req) =>
      trust === undefined ? (req.socket.remoteAddress ?? 'unknown') : proxyAddr(req, trust),
    errorPage,
  });
  return function serveEdge(req, res) {
    if (!fastLane(req, res)) app(req, res);
  };
}

function answerWithoutIcon(_req: express.Request, res: express.Response): void {
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.status(204).end();
}
