import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  authFlowDepsFromConfig,
  authFlowMigrations,
  cachingRegistryAnswers,
  createAuthFlowImplementations,
  createRedisAuthFlowStore,
  createSqlAuthFlowStore,
  type AuthFlowStore,
} from '@gateway/auth-flow';
import { OnboardingService, RegistryService } from '@gateway/contracts';
import type { GatewayConfig } from '@gateway/config';
import {
  migrateSchema,
  openRegistryChangeFeed,
  type ChangeFeed,
  type Database,
  type RedisClient,
} from '@gateway/db';
import {
  createEdgeApp,
  createEdgeClients,
  createIdentityIssuerCheck,
  createRedisRateLimitStore,
  listen,
  type IdentityIssuerCheck,
} from '@gateway/edge';
import { createOnboardingImplementations, onboardingMigrations } from '@gateway/onboarding';
import {
  createRegistryImplementations,
  registryDepsFromConfig,
  registryMigrations,
  seedDeploymentEnvironment,
} from '@gateway/registry';
import {
  connectService,
  createServiceInterceptors,
  type ServiceImplementation,
  type ServiceTarget,
} from '@gateway/rpc';
import type { Logger } from '@gateway/telemetry';

export const allSchemaMigrations = [registryMigrations, onboardingMigrations, authFlowMigrations];

export type RunningGateway = {
  url: string;
  port: number;
  /** Whether IDENTITY_ISSUER answers: checked at start, reported by readiness. */
  identityIssuer: IdentityIssuerCheck;
  close(): Promise<void>;
};

/**
 * The all-in-one gateway: the edge and the three services in one process, each service made
 * once and called straight through its implementation (connectService: the same interceptors,
 * deadlines and errors as split mode, with no encoding and no network hop). One
 * Database is shared by the services: with PGlite it is a single connection, and each service
 * keeps to its own schema.
 */
export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  db: Database;
  /** One server, the Sentinel master or a Cluster (connectRedis). */
  redis?: RedisClient;
  /** Overrides config.port (tests pass 0). */
  port?: number;
  /**
   * Served before the gateway's own routes on the same origin: the development identity
   * service of the embedded default (`/api/auth`, `/account`, `/internal/v1`). It calls
   * `next` for everything else.
   */
  beforeEdge?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
}): Promise<RunningGateway> {
  const { config, logger, db, redis } = options;
  for (const migrations of allSchemaMigrations) await migrateSchema(db, migrations);
  const registryDeps = registryDepsFromConfig(config, db);
  await seedDeploymentEnvironment(registryDeps);

  const probeTimeoutMs = config.databaseTimeoutMs;
  const registry = inProcess(
    logger,
    'registry',
    createRegistryImplementations({
      deps: registryDeps,
      probeTimeoutMs,
      onBackgroundError: (error) => logger.warn({ err: error }, 'recording credential use failed'),
    }),
  );
  const onboarding = inProcess(
    logger,
    'onboarding',
    createOnboardingImplementations({ db, probeTimeoutMs }),
  );
  const loginState = openAuthFlowStore(db, redis, logger);
  // Registry changes announced by the edge reach the auth-flow service's cache in this process
  // at once, and every other instance on the same Redis.
  const changeFeed = await openRegistryChangeFeed(redis, {
    redisKeyPrefix: config.redisKeyPrefix,
    onAnnounceFailed: (error) => logger.warn({ err: error }, 'announcing a registry change failed'),
  });
  const authFlow = authFlowTarget(options, {
    store: loginState.store,
    registry,
    onboarding,
    changeFeed,
  });
  const identityIssuer = createIdentityIssuerCheck({
    issuer: config.identityIssuer,
    timeoutMs: config.serviceCallTimeoutMs,
  });
  const edge = createEdgeApp({
    config,
    identityIssuer,
    logger: logger.child({ component: 'edge' }),
    clients: createEdgeClients({ registry, authFlow, onboarding }, config.serviceCallTimeoutMs),
    changeFeed,
    // With Redis the limits are shared by every instance on it; without, kept in process.
    ...(redis === undefined ? {} : { rateLimitStore: createRedisRateLimitStore(redis) }),
  });
  const { beforeEdge } = options;
  const server = await listen(
    beforeEdge === undefined ? edge : (req, res) => beforeEdge(req, res, () => edge(req, res)),
    options.port ?? config.port,
  );
  return {
    url: `http://localhost:${server.port}`,
    port: server.port,
    identityIssuer,
    close: async () => {
      clearInterval(loginState.purge);
      await server.close();
      await changeFeed.close();
    },
  };
}

/** A service served in this process, with the same server interceptors as split mode. */
function inProcess(
  logger: Logger,
  service: string,
  implementations: readonly ServiceImplementation[],
): ServiceTarget {
  const serverInterceptors = createServiceInterceptors(logger.child({ component: service }));
  return { kind: 'in-process', implementations, serverInterceptors };
}

/**
 * The login state store: Redis when there is one (it expires keys itself), else SQL, whose
 * expired rows are removed every 10 minutes.
 */
function openAuthFlowStore(
  db: Database,
  redis: RedisClient | undefined,
  logger: Logger,
): { store: AuthFlowStore; purge: NodeJS.Timeout | undefined } {
  if (redis !== undefined) {
    return { store: createRedisAuthFlowStore(redis), purge: undefined };
  }
  const sqlStore = createSqlAuthFlowStore(db);
  const purge = setInterval(() => {
    sqlStore.purgeExpired(Date.now()).catch((error: unknown) => {
      logger.warn({ err: error }, 'purging expired login state failed');
    });
  }, 10 * 60_000);
  purge.unref();
  return { store: sqlStore, purge };
}

/**
 * The auth-flow service, made once and called directly by the edge. Its registry answers are
 * cached until a registry change is announced on `changeFeed`.
 */
function authFlowTarget(
  options: { config: GatewayConfig; logger: Logger; db: Database },
  parts: {
    store: AuthFlowStore;
    registry: ServiceTarget;
    onboarding: ServiceTarget;
    changeFeed: ChangeFeed;
  },
): ServiceTarget {
  const { config, logger, db } = options;
  const connect = (target: ServiceTarget) =>
    connectService(target, { timeoutMs: config.serviceCallTimeoutMs });
  const authFlowDeps = authFlowDepsFromConfig(config, {
    db,
    store: parts.store,
    registry: cachingRegistryAnswers(
      connect(parts.registry).client(RegistryService),
      parts.changeFeed,
    ),
    onboarding: connect(parts.onboarding).client(OnboardingService),
  });
  return inProcess(
    logger,
    'auth-flow',
    createAuthFlowImplementations({
      deps: authFlowDeps,
      probeTimeoutMs: config.databaseTimeoutMs,
      logger: logger.child({ component: 'auth-flow' }),
    }),
  );
}
