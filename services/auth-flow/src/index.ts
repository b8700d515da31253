export { authFlowMigrations } from './authflow-migrations.js';
export { createAuthFlowRoutes, type AuthFlowServiceOptions } from './auth-flow-service.js';
export { connectRedis, type RedisConnectionOptions } from './redis-connection.js';
