// Test support: the three stores the contract suite runs against, each on fresh storage.
import { randomUUID } from 'node:crypto';
import { connectRedis, createDatabase, migrateSchema } from '@gateway/db';
import type { Database, RedisClient, RedisEndpoint } from '@gateway/db';
import {
  createTestDatabase,
  createTestRedis,
  startRedisCluster,
  startRedisSentinel,
} from '@gateway/testkit';
import type { Redis } from 'ioredis';
import { authFlowMigrations } from '../../authflow-migrations.js';
import type { AuthFlowStore } from '../auth-flow-store.js';
import { createRedisAuthFlowStore } from '../redis-auth-flow-store.js';
import { createSqlAuthFlowStore } from '../sql-auth-flow-store.js';
import type { SqlAuthFlowStore } from '../sql-auth-flow-store.js';

export type OpenStore<S extends AuthFlowStore = AuthFlowStore> = {
  store: S;
  /**
   * Stores on separate connections to the same data, for concurrency cases: five Redis
   * connections; for SQL the one store (PostgreSQL's pool gives it several connections, PGlite
   * has exactly one).
   */
  peers: AuthFlowStore[];
  close(): Promise<void>;
};

export type StoreFactory<S extends AuthFlowStore = AuthFlowStore> = {
  name: string;
  open(): Promise<OpenStore<S>>;
};

const TIMEOUT_MS = 5_000;

export type RedisStoreHandle = OpenStore & { redis: Redis; url: string; keyPrefix: string };

export async function openRedisStore(): Promise<RedisStoreHandle> {
  const testRedis = await createTestRedis();
  const connect = () =>
    connectRedis({ url: testRedis.url, keyPrefix: testRedis.keyPrefix, timeoutMs: TIMEOUT_MS });
  const redis = await connect();
  const others = await Promise.all(Array.from({ length: 5 }, connect));
  return {
    redis,
    url: testRedis.url,
    keyPrefix: testRedis.keyPrefix,
    store: createRedisAuthFlowStore(redis),
    peers: others.map((connection) => createRedisAuthFlowStore(connection)),
    close: async () => {
      for (const connection of [redis, ...others]) connection.disconnect();
      await testRedis.cleanup();
    },
  };
}

/**
 * The store on a Redis setup this call starts and stops: one per test file that opens it
 * (a describe.each case), shared by that file's tests.
 */
async function openStoreOn(
  connection: RedisEndpoint,
  stop: () => Promise<void>,
): Promise<OpenStore & { redis: RedisClient }> {
  const keyPrefix = `authflow-test:${randomUUID()}:`;
  const connect = () => connectRedis({ ...connection, keyPrefix, timeoutMs: TIMEOUT_MS });
  const connections: RedisClient[] = [];
  try {
    for (let index = 0; index < 6; index += 1) connections.push(await connect());
  } catch (error) {
    for (const opened of connections) opened.disconnect();
    await stop();
    throw error;
  }
  const [redis, ...others] = connections as [RedisClient, ...RedisClient[]];
  return {
    redis,
    store: createRedisAuthFlowStore(redis),
    peers: others.map((other) => createRedisAuthFlowStore(other)),
    close: async () => {
      for (const opened of connections) opened.disconnect();
      await stop();
    },
  };
}

/** Redis Cluster (three masters, one replica each) and Sentinel (a master, a replica). */
export const redisSetupFactories: StoreFactory[] = [
  {
    name: 'Redis Cluster',
    open: async () => {
      const cluster = await startRedisCluster();
      return openStoreOn(cluster.connection, () => cluster.stop());
    },
  },
  {
    name: 'Redis Sentinel',
    open: async () => {
      const setup = await startRedisSentinel();
      return openStoreOn(setup.connection, () => setup.stop());
    },
  },
];

async function openSqlStore(db: Database, drop?: () => Promise<void>) {
  await migrateSchema(db, authFlowMigrations);
  const store = createSqlAuthFlowStore(db);
  return {
    db,
    store,
    peers: [store],
    close: async () => {
      await db.close();
      await drop?.();
    },
  };
}

export type SqlStoreHandle = OpenStore<SqlAuthFlowStore> & { db: Database };

export const sqlFactories: StoreFactory<SqlAuthFlowStore>[] = [
  {
    name: 'SQL on PostgreSQL',
    open: async (): Promise<SqlStoreHandle> => {
      const testDatabase = await createTestDatabase();
      const db = await createDatabase({ url: testDatabase.url, poolMax: 20 });
      return openSqlStore(db, () => testDatabase.drop());
    },
  },
  {
    name: 'SQL on PGlite in memory',
    open: async (): Promise<SqlStoreHandle> =>
      openSqlStore(await createDatabase({ inMemory: true })),
  },
];

export const storeFactories: StoreFactory[] = [
  { name: 'Redis', open: openRedisStore },
  ...redisSetupFactories,
  ...sqlFactories,
];
