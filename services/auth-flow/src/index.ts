export { authFlowMigrations } from './authflow-migrations.js';
export {
  createAuthFlowImplementations,
  createAuthFlowServiceImpl,
  type AuthFlowServiceOptions,
} from './auth-flow-service.js';
export { authFlowDepsFromConfig } from './auth-flow-deps-from-config.js';
export type { AuthFlowDeps } from './auth-flow-deps.js';
export { createRedisAuthFlowStore, createSqlAuthFlowStore } from './store/index.js';
export type { AuthFlowStore } from './store/auth-flow-store.js';
export { cachingRegistryAnswers, REGISTRY_ANSWER_TTL_MS } from './registry-answers-cache.js';
