// Split mode: the auth-flow service as its own process (Connect over HTTP/2 on PORT), with
// PostgreSQL for users and roles, Redis for transactions, handoffs and sessions (one server,
// Sentinel or Cluster; in production checked to keep them over its restarts), and the
// registry and onboarding services over HTTP/2.
import { OnboardingService, RegistryService } from '@gateway/contracts';
import {
  checkRedisKeepsSessions,
  connectRedis,
  createDatabase,
  migrateSchema,
  openRegistryChangeFeed,
  RedisNotDurableError,
} from '@gateway/db';
import { connectService, runServiceProcess } from '@gateway/rpc';
import { authFlowDepsFromConfig } from './auth-flow-deps-from-config.js';
import { createAuthFlowImplementations } from './auth-flow-service.js';
import { cachingRegistryAnswers } from './registry-answers-cache.js';
import { authFlowMigrations } from './authflow-migrations.js';
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
    // REDIS_URL is required, or REDIS_SENTINELS or REDIS_CLUSTER_NODES in its stead.
    if (config.redis === undefined) throw new Error('No Redis is configured');
    const redis = await connectRedis({
      ...config.redis,
      keyPrefix: config.redisKeyPrefix,
      timeoutMs: config.databaseTimeoutMs,
    });
    if (config.production) {
      await checkRedisKeepsSessions(redis, {
        required: config.redisRequirePersistence,
        logger,
      }).catch((error: unknown) => {
        if (!(error instanceof RedisNotDurableError)) throw error;
        logger.fatal(error.message);
        process.exit(1);
      });
    }
    const remote = (baseUrl: string | undefined) =>
      connectService(
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
      // The store is typed for one connection; a Cluster has every command and option it
      // uses (keyPrefix), and runs each script on the node of its keys' hash slot.
      store: createRedisAuthFlowStore(redis),
      registry: cachingRegistryAnswers(
        remote(config.registryServiceUrl).client(RegistryService),
        feed,
      ),
      onboarding: remote(config.onboardingServiceUrl).client(OnboardingService),
    });
    return {
      implementations: createAuthFlowImplementations({
        deps,
        probeTimeoutMs: config.databaseTimeoutMs,
        logger,
      }),
      close: async () => {
        await feed.close();
        redis.disconnect();
        await db.close();
      },
    };
  },
});
