// Split mode: the auth-flow service as its own process (Connect over HTTP/2 on PORT), with
// PostgreSQL for users and roles, Redis for transactions, handoffs and sessions, and the
// registry and onboarding services over HTTP/2.
import { createClient } from '@connectrpc/connect';
import { OnboardingService, RegistryService } from '@gateway/contracts';
import { connectRedis, createDatabase, migrateSchema, openRegistryChangeFeed } from '@gateway/db';
import { combineRoutes, createServiceTransport, runServiceProcess } from '@gateway/rpc';
import { authFlowDepsFromConfig } from './auth-flow-deps-from-config.js';
import { createAuthFlowRoutes, createAuthFlowServiceImpl } from './auth-flow-service.js';
import { cachingRegistryAnswers } from './registry-answers-cache.js';
import { authFlowMigrations } from './authflow-migrations.js';
import { createSessionIntrospectionRoutes } from './session-introspection-routes.js';
import { createRedisAuthFlowStore } from './store/index.js';

await runServiceProcess({
  service: 'auth-flow',
  requiredConfig: [
    'DATABASE_URL',
    'REDIS_URL',
    'GATEWAY_ENCRYPTION_KEYS',
    'REGISTRY_SERVICE_URL',
    'ONBOARDING_SERVICE_URL',
  ],
  async start({ config, logger }) {
    const db = await createDatabase({
      url: config.databaseUrl,
      connectTimeoutMs: config.databaseTimeoutMs,
      statementTimeoutMs: config.databaseTimeoutMs,
    });
    await migrateSchema(db, authFlowMigrations);
    const redis = await connectRedis({
      url: config.redisUrl ?? '',
      keyPrefix: config.redisKeyPrefix,
      timeoutMs: config.databaseTimeoutMs,
    });
    const remote = (baseUrl: string | undefined) =>
      createServiceTransport(
        { kind: 'remote', baseUrl: baseUrl ?? '' },
        { timeoutMs: config.serviceCallTimeoutMs },
      );
    // Registry changes are announced on Redis by the edge that makes them.
    const feed = await openRegistryChangeFeed(redis, {
      redisKeyPrefix: config.redisKeyPrefix,
      onAnnounceFailed: (error) =>
        logger.warn({ err: error }, 'announcing a registry change failed'),
    });
    const deps = authFlowDepsFromConfig(config, {
      db,
      store: createRedisAuthFlowStore(redis),
      registry: cachingRegistryAnswers(
        createClient(RegistryService, remote(config.registryServiceUrl)),
        feed,
      ),
      onboarding: createClient(OnboardingService, remote(config.onboardingServiceUrl)),
    });
    return {
      routes: combineRoutes(
        createAuthFlowRoutes({ deps, probeTimeoutMs: config.databaseTimeoutMs }),
        // The edge's introspections that reach it together (services/edge, service-clients.ts).
        createSessionIntrospectionRoutes(createAuthFlowServiceImpl(deps)),
      ),
      close: async () => {
        await feed.close();
        redis.disconnect();
        await db.close();
      },
    };
  },
});
