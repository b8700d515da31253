import { Redis } from 'ioredis';
import { isContainerRuntimeAvailable } from './container-runtime.js';

export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 2_000;

let redisUrlPromise: Promise<string> | undefined;

/** The Redis URL tests use, found once per process: REDIS_URL, local server, testcontainer. */
export function testRedisUrl(): Promise<string> {
  redisUrlPromise ??= findRedisUrl().catch((error: unknown) => {
    redisUrlPromise = undefined;
    throw error;
  });
  return redisUrlPromise;
}

async function findRedisUrl(): Promise<string> {
  const fromEnvironment = process.env.REDIS_URL;
  if (fromEnvironment) return fromEnvironment;
  if (await redisAnswers(LOCAL_REDIS_URL)) return LOCAL_REDIS_URL;
  if (await isContainerRuntimeAvailable()) return startRedisContainer();
  throw new Error(
    'No Redis server for tests: REDIS_URL is not set, nothing answered PING at ' +
      `${LOCAL_REDIS_URL} within ${PROBE_TIMEOUT_MS / 1000} s, and no Docker engine is ` +
      'reachable for testcontainers. Either set REDIS_URL (e.g. redis://redis-host:6379) or ' +
      'start Redis on 127.0.0.1:6379.',
  );
}

async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function startRedisContainer(): Promise<string> {
  const { RedisContainer } = await import('@testcontainers/redis');
  // Started once per process; testcontainers' reaper removes it when the process exits.
  const container = await new RedisContainer('redis:7-alpine').start();
  return container.getConnectionUrl();
}
