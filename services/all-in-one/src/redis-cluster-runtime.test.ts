import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@gateway/config';
import { generateEncryptionKeySpec } from '@gateway/crypto';
import { connectRedis, createDatabase, type Database } from '@gateway/db';
import { createLogger } from '@gateway/telemetry';
import {
  createTestDatabase,
  startRedisCluster,
  type RedisCluster,
  type TestDatabase,
} from '@gateway/testkit';
import type { Cluster } from 'ioredis';
import { startGateway, type RunningGateway } from './gateway-runtime.js';

// The all-in-one gateway wired to a Redis Cluster (config.redis in Cluster mode): the
// auth-flow store answers the readiness check through it and the edge's rate limits count in
// it.
describe('the all-in-one gateway on a Redis Cluster', () => {
  let testDb: TestDatabase;
  let cluster: RedisCluster;
  let db: Database;
  let redis: Cluster;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [testDb, cluster] = await Promise.all([createTestDatabase(), startRedisCluster()]);
    const config = loadConfig({
      IDENTITY_ISSUER: 'http://localhost:8080/api/auth/env/PROD',
      GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
      LOG_LEVEL: 'silent',
      RATE_LIMIT_BROWSER_PER_IP: '1',
      REDIS_KEY_PREFIX: 'gw:',
      ...cluster.env,
    });
    expect(config.redis?.mode).toBe('cluster');
    if (config.redis?.mode !== 'cluster') throw new Error('not Cluster mode');
    db = await createDatabase({ url: testDb.url });
    redis = await connectRedis({
      ...config.redis,
      keyPrefix: config.redisKeyPrefix,
      timeoutMs: config.databaseTimeoutMs,
    });
    const logger = createLogger({ service: 'test', level: 'silent' });
    gateway = await startGateway({ config, logger, db, redis, port: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    if (redis?.status !== 'end') redis?.disconnect();
    await db?.close();
    await cluster?.stop();
    await testDb?.drop();
  });

  it('answers ready, auth-flow reaching the Cluster', async () => {
    const ready = await fetch(`${gateway.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { authFlow: 'up' } });
  });

  it('counts the rate limits in the Cluster', async () => {
    const start = () =>
      fetch(`${gateway.url}/v1/auth/start?platformKey=NONE&returnTo=%2F`, { redirect: 'manual' });
    expect((await start()).status).not.toBe(429);
    expect((await start()).status).toBe(429);
    const keys: string[] = [];
    for (const node of redis.nodes('master')) {
      keys.push(...(await node.keys('gw:rl:*')));
    }
    expect(keys.length).toBeGreaterThan(0);
  });
});
