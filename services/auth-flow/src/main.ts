// Split mode: the auth-flow service as its own process (Connect over HTTP/2 on PORT),
// with PostgreSQL for users and roles and Redis for transactions, handoffs and sessions.
import { createDatabase, migrateSchema } from '@gateway/db';
import { runServiceProcess } from '@gateway/rpc';
import { createAuthFlowRoutes } from './auth-flow-service.js';
import { authFlowMigrations } from './authflow-migrations.js';
import { connectRedis } from './redis-connection.js';

await runServiceProcess({
  service: 'auth-flow',
  requiredConfig: ['DATABASE_URL', 'REDIS_URL'],
  async start({ config }) {
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
    return {
      routes: createAuthFlowRoutes({ db, redis, probeTimeoutMs: config.databaseTimeoutMs }),
      close: async () => {
        redis.disconnect();
        await db.close();
      },
    };
  },
});
