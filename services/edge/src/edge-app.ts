import type { IncomingMessage, RequestListener } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { GatewayConfig } from '@gateway/config';
import { createLocalChangeFeed, type ChangeFeed } from '@gateway/db';
import { createAccessTokenVerifier, createDiscoveryCache, createJwksCache } from '@gateway/oidc';
import type { Logger } from '@gateway/telemetry';
import { createAdminConsolePages } from './admin-console/console-pages.js';
import { createAuthentication, type Authentication } from './auth/authentication.js';
import { createIssuerResolver } from './auth/issuer-resolver.js';
import { createUserAuthentication } from './auth/user-authentication.js';
import { createFailedPlatformAuthentications } from './auth/platform-authentication-failures.js';
import {
  createPlatformAuthenticationLimits,
  PLATFORM_AUTHENTICATION_LIMITS,
  type PlatformAuthenticationLimitSettings,
} from './auth/platform-authentication-limits.js';
import { createPlatformCredentialVerifier } from './http/basic-credentials.js';
import { createCors, type Cors } from './http/cors.js';
import { createEdgeServer } from './http/edge-server.js';
import { createLoadShedder } from './http/load-shedding.js';
import type { AnyOperation } from './http/operation.js';
import { OperationCatalog } from './http/operation-catalog.js';
import { createOperationRunner } from './http/operation-runner.js';
import { createRateLimiter } from './http/rate-limit.js';
import { createMemoryRateLimitStore, type RateLimitStore } from './http/rate-limit-store.js';
import { BODY_DEADLINE_MS } from './http/request-body.js';
import { RouteTable } from './http/route-table.js';
import { accountOperations } from './routes/account-routes.js';
import { auditOperations } from './routes/audit-routes.js';
import { sessionFlowOperations } from './routes/auth-routes.js';
import { backchannelLogoutOperations } from './routes/backchannel-logout-routes.js';
import { createDocsPages } from './routes/docs-routes.js';
import { globalFieldOperations } from './routes/global-field-routes.js';
import { healthOperations } from './routes/health-routes.js';
import { identityEnvironmentOperations } from './routes/identity-environment-routes.js';
import { loginOperations } from './routes/login-operations.js';
import { onboardingFieldOperations } from './routes/onboarding-field-routes.js';
import { onboardingUserOperations } from './routes/onboarding-user-routes.js';
import { platformOperations } from './routes/platform-routes.js';
import { profileOperations } from './routes/profile-routes.js';
import { userAdminOperations } from './routes/user-admin-routes.js';
import { accountSessionOperations, adminSessionOperations } from './routes/user-session-routes.js';
import { createIdentityIssuerCheck, type IdentityIssuerCheck } from './identity-issuer-check.js';
import { announcingRegistryChanges } from './registry-changes.js';
import type { EdgeClients } from './service-clients.js';

export type EdgeAppOptions = {
  config: GatewayConfig;
  logger: Logger;
  clients: EdgeClients;
  /** Rate limit counters; default: in this process only (a single instance). */
  rateLimitStore?: RateLimitStore;
  /**
   * Where registry changes are announced and heard: shared with the auth-flow service in one
   * process, or through Redis across processes. Default: this edge only.
   */
  changeFeed?: ChangeFeed;
  /** How long a request body may take to arrive; default BODY_DEADLINE_MS (tests shorten it). */
  bodyDeadlineMs?: number;
  /** The back-off after failed platform authentications; default PLATFORM_AUTHENTICATION_LIMITS. */
  platformAuthenticationLimits?: PlatformAuthenticationLimitSettings;
  /** Whether IDENTITY_ISSUER answers (readiness's details); default: one of this edge's own. */
  identityIssuer?: IdentityIssuerCheck;
};

/** Every operation of the public contract, in the order /openapi.json describes them. */
export const EDGE_OPERATIONS: readonly AnyOperation[] = [
  ...healthOperations,
  ...platformOperations,
  ...identityEnvironmentOperations,
  ...auditOperations,
  ...userAdminOperations,
  ...adminSessionOperations,
  ...onboardingFieldOperations,
  ...globalFieldOperations,
  ...loginOperations,
  ...sessionFlowOperations,
  ...backchannelLogoutOperations,
  ...accountOperations,
  ...accountSessionOperations,
  ...onboardingUserOperations,
  ...profileOperations,
];

/** The OpenAPI 3.1 document of every operation, as /openapi.json serves it. */
export function edgeOpenApiJson(baseUrl: string): string {
  const catalog = new OperationCatalog();
  for (const operation of EDGE_OPERATIONS) catalog.add(operation);
  return catalog.openApiJson({ baseUrl });
}

/**
 * The public edge: every route of the spec, validated with zod, described in /openapi.json,
 * answering errors with the spec's body. It keeps no state; the services do. Every operation
 * runs through the one operation runner on node:http; Express serves only the API docs.
 */
export function createEdgeApp(options: EdgeAppOptions): RequestListener {
  const { config, logger } = options;
  const feed = options.changeFeed ?? createLocalChangeFeed();
  const clients: EdgeClients = {
    ...options.clients,
    registry: announcingRegistryChanges(options.clients.registry, () => void feed.announce()),
  };
  const cors = createCors({
    corsOrigins: config.corsOrigins,
    identityIssuer: config.identityIssuer,
    registry: clients.registry,
    logger,
  });
  // A registry change is visible to the next request: the CORS allowlist is read again (on
  // every edge that hears the feed; issuer resolutions and verified keys drop themselves).
  feed.subscribe(() => cors.invalidate());
  const catalog = new OperationCatalog();
  const routes = new RouteTable();
  for (const operation of EDGE_OPERATIONS) {
    catalog.add(operation);
    routes.add(operation);
  }
  const isAllowedOrigin = (origin: string) => cors.isAllowedOrigin(origin);
  const shedder = createLoadShedder({ maxInFlight: config.overloadMaxInFlight, logger });
  const clientAddress = clientAddressOf(config.trustedProxies);
  const runOperation = createOperationRunner({
    services: {
      clients,
      baseUrl: config.baseUrl,
      probeTimeoutMs: config.databaseTimeoutMs,
      identityIssuer:
        options.identityIssuer ??
        createIdentityIssuerCheck({
          issuer: config.identityIssuer,
          timeoutMs: config.serviceCallTimeoutMs,
        }),
    },
    logger,
    limiter: createRateLimiter({
      settings: {
        windowSeconds: config.rateLimitWindowSeconds,
        browserPerIp: config.rateLimitBrowserPerIp,
        exchangePerClient: config.rateLimitExchangePerClient,
        introspectPerClient: config.rateLimitIntrospectPerClient,
        serverPerIp: config.rateLimitServerPerIp,
      },
      store: options.rateLimitStore ?? createMemoryRateLimitStore(),
      logger,
    }),
    shedder,
    credentials: createPlatformCredentialVerifier(clients.registry, { feed }),
    failedPlatformAuthentications: createFailedPlatformAuthentications({
      registry: clients.registry,
      logger,
      windowMs: config.platformAuthFailureWindowSeconds * 1000,
    }),
    platformAuthenticationLimits: createPlatformAuthenticationLimits(
      options.platformAuthenticationLimits ?? PLATFORM_AUTHENTICATION_LIMITS,
    ),
    ...createCallerAuthentication(config, clients, feed, cors),
    isAllowedOrigin,
    cookie: { secure: config.production },
    clientAddress,
    errorPage: { accountUrl: config.accountCenterUrl },
    bodyDeadlineMs: options.bodyDeadlineMs ?? BODY_DEADLINE_MS,
  });
  return createEdgeServer({
    routes,
    runOperation,
    shedder,
    clientAddress,
    pages: [
      ...createDocsPages(catalog, { baseUrl: config.baseUrl, logger }),
      ...createAdminConsolePages({ baseUrl: config.baseUrl, registry: clients.registry, logger }),
    ],
    cors,
    logger,
    production: config.production,
    errorPage: { accountUrl: config.accountCenterUrl },
  });
}

/**
 * Spec 5: Bearer tokens and the gateway cookie. A Bearer token's issuer selects its identity
 * environment through the registry; discovery and JWKS of each issuer are fetched once and
 * cached.
 */
function createCallerAuthentication(
  config: GatewayConfig,
  clients: EdgeClients,
  feed: ChangeFeed,
  cors: Cors,
): Pick<Parameters<typeof createOperationRunner>[0], 'authentication' | 'userAuthentication'> {
  const issuers = createIssuerResolver(clients.registry, { feed });
  const verifier = createAccessTokenVerifier({
    audience: config.accessTokenAudience,
    maxLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
    resolveIssuer: (issuer) => issuers.resolve(issuer),
    discovery: createDiscoveryCache({ timeoutMs: config.serviceCallTimeoutMs }),
    jwks: createJwksCache({ timeoutMs: config.serviceCallTimeoutMs }),
  });
  const authentication: Authentication = createAuthentication({
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
  const userAuthentication = createUserAuthentication({ verifier, authFlow: clients.authFlow });
  return { authentication, userAuthentication };
}

/**
 * The client's address for the rate limits: X-Forwarded-For is believed only from the
 * configured proxies (the address as the nearest trusted proxy saw it), otherwise the
 * connection's.
 */
function clientAddressOf(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = proxyAddr.compile([...trustedProxies]);
  return (req) => proxyAddr(req, trust);
}
