import { describe, it, expect, afterAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { createTestRedis } from './test-redis.js';
import type { TestRedis } from './test-redis.js';

const toCleanUp: TestRedis[] = [];
const clients: Redis[] = [];

async function newRedis(): Promise<TestRedis> {
  const redis = await createTestRedis();
  toCleanUp.push(redis);
  return redis;
}

function client(url: string): Redis {
  const redis = new Redis(url);
  clients.push(redis);
  return redis;
}

afterAll(async () => {
  await Promise.all(toCleanUp.map((redis) => redis.cleanup()));
  await Promise.all(clients.map((redis) => redis.quit()));
});

describe('createTestRedis', () => {
  it('gives each caller its own t:<hex>: prefix on a reachable server', async () => {
    const [first, second] = await Promise.all([newRedis(), newRedis()]);
    expect(first.keyPrefix).toMatch(/^t:[0-9a-f]+:$/);
    expect(first.keyPrefix).not.toBe(second.keyPrefix);
    expect(await client(first.url).ping()).toBe('PONG');
  });

  it("cleanup removes the prefix's keys and leaves another prefix's keys alone", async () => {
    const mine = await createTestRedis();
    const other = await newRedis();
    const redis = client(mine.url);
    // More keys than one SCAN page, so cleanup has to follow the cursor.
    const pipeline = redis.pipeline();
    for (let index = 0; index < 1200; index += 1) pipeline.set(`${mine.keyPrefix}k${index}`, 'v');
    pipeline.hset(`${mine.keyPrefix}hash`, 'field', 'v');
    pipeline.set(`${other.keyPrefix}survivor`, 'still here');
    await pipeline.exec();

    await mine.cleanup();

    expect(await redis.exists(`${mine.keyPrefix}k0`, `${mine.keyPrefix}k1199`)).toBe(0);
    expect(await redis.exists(`${mine.keyPrefix}hash`)).toBe(0);
    const [, left] = await redis.scan('0', 'MATCH', `${mine.keyPrefix}*`, 'COUNT', 10_000);
    expect(left).toEqual([]);
    expect(await redis.get(`${other.keyPrefix}survivor`)).toBe('still here');
  });
});
