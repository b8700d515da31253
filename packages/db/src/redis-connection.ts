import { Redis } from 'ioredis';

export type RedisConnectionOptions = {
  url: string;
  /** Prefix of every key (tests give each file its own). */
  keyPrefix?: string;
  /** Deadline to connect, and of each command while connected. */
  timeoutMs: number;
};

/**
 * Connects to Redis and fails fast while it is unreachable: commands are not queued for a
 * later reconnect (no offline queue), so a caller gets an error within the deadline and
 * fails closed, and ioredis keeps reconnecting in the background until Redis is back.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    keyPrefix: options.keyPrefix ?? '',
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // Without a listener ioredis reports every failed reconnect as an unhandled error.
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}
