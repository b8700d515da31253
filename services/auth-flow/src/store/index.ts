export type {
  AuthFlowStore,
  BindResult,
  HandoffRecord,
  IssueResult,
  OnboardingMode,
  SessionRecord,
  TransactionRecord,
} from './auth-flow-store.js';
export { createRedisAuthFlowStore } from './redis-auth-flow-store.js';
export { createSqlAuthFlowStore } from './sql-auth-flow-store.js';
export type { PurgeResult, SqlAuthFlowStore } from './sql-auth-flow-store.js';
