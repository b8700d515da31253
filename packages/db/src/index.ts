export { createDatabase } from './create-database.js';
export {
  DATA_DIR_LOCK_FILE,
  DataDirLockedError,
  lockDataDir,
  type DataDirLock,
} from './data-dir-lock.js';
export { restrictToOwner } from './restrict-to-owner.js';
export type {
  CreateDatabaseOptions,
  Database,
  DatabaseKind,
  DatabaseListener,
} from './database.js';
export { DatabaseUnavailableError, isConnectionFailure, isUniqueViolation } from './errors.js';
export { migrateSchema, migrationStatus, rollbackSchema } from './migrations.js';
export type {
  Migration,
  MigrationLockOptions,
  MigrationStatus,
  RollbackOptions,
  SchemaMigrations,
} from './migrations.js';
export { toCount } from './count.js';
export { queryRows } from './direct-statements.js';
export { connectRedis } from './redis-connection.js';
export type {
  ClusterRedisEndpoint,
  RedisAddress,
  RedisClient,
  RedisConnectionOptions,
  RedisEndpoint,
  SentinelRedisEndpoint,
  SingleRedisEndpoint,
} from './redis-connection.js';
export { createLocalChangeFeed, openRegistryChangeFeed, type ChangeFeed } from './change-feed.js';
export {
  assessRedisDurability,
  checkRedisKeepsSessions,
  RedisNotDurableError,
  type MasterDurability,
  type RedisDurability,
} from './redis-durability.js';
export { FeedCache, type FeedCacheOptions } from './feed-cache.js';
