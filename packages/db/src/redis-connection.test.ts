// connectRedis against the real Redis: the commands of one turn of the event loop
// leave the socket together at the turn's end, in order, and each gets its own answer.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { createTestRedis, type TestRedis } from '@gateway/testkit';
import { connectRedis } from './redis-connection.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('connectRedis: one write per turn of the event loop', () => {
  let testRedis: TestRedis;
  let redis: Redis;
  beforeAll(async () => {
    testRedis = await createTestRedis();
    redis = await connectRedis({
      url: testRedis.url,
      keyPrefix: testRedis.keyPrefix,
      timeoutMs: 2_000,
    });
  });
  afterAll(async () => {
    redis.disconnect();
    await testRedis.cleanup();
  });

  it('holds the commands of a turn and sends them together when it ends, in order', async () => {
    const socket = redis.stream;
    const replies = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? redis.set(`key-${i}`, String(i)) : redis.get(`key-${i - 1}`),
    );
    // Nothing has left yet: the socket holds the 200 commands until the turn's check phase.
    expect(socket.writableCorked).toBe(1);
    expect(socket.writableLength).toBeGreaterThan(200 * 10);
    const answers = await Promise.all(replies);
    expect(socket.writableCorked).toBe(0);
    expect(answers).toEqual(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 'OK' : String(i - 1))),
    );
  });

  it('sends the commands of each later turn in that turn', async () => {
    await nextTurn();
    expect(await redis.incr('counter')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const [third, fourth] = await Promise.all([redis.incr('counter'), redis.incr('counter')]);
    expect([third, fourth]).toEqual([2, 3]);
    await nextTurn();
    expect(redis.stream.writableCorked).toBe(0);
    expect(redis.stream.writableLength).toBe(0);
  });

  it('answers a command sent while disconnected at once with an error, never later', async () => {
    const lost = await connectRedis({
      url: testRedis.url,
      keyPrefix: testRedis.keyPrefix,
      timeoutMs: 2_000,
    });
    lost.disconnect();
    await expect(lost.get('key-0')).rejects.toThrow();
    // The turn's end releases the socket, also one that was closing.
    await nextTurn();
    expect(lost.stream.writableCorked).toBe(0);
  });
});
