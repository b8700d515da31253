import type { Redis } from 'ioredis';

/**
 * Tells the caches of every gateway process that shared data changed: the edge
 * keeps verified platform credentials, the auth-flow service the registry's answers about
 * platforms and environments. Whoever commits a change announces it; every subscriber drops
 * what it keeps and asks again.
 *
 * - `createLocalChangeFeed`: one process (the all-in-one gateway without Redis).
 * - `createRedisChangeFeed`: every process on one Redis (split mode, several all-in-one
 *   instances), through pub/sub. While the subscription is down a subscriber cannot know
 *   what it misses, so `connected` turns false (caches serve nothing then) and every
 *   listener is called when it drops and again when it is back.
 */
export interface ChangeFeed {
  /** False while announcements from other processes may be missed: do not serve cached data. */
  readonly connected: boolean;
  /**
   * Calls this process's listeners at once, then tells the other processes. Never rejects:
   * a failure to tell the others is reported to `onError` (their caches expire on their own).
   */
  announce(): Promise<void>;
  /** `listener` runs on every announcement and whenever `connected` changes. Returns unsubscribe. */
  subscribe(listener: () => void): () => void;
  close(): Promise<void>;
}

class Listeners {
  readonly #listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

export function createLocalChangeFeed(): ChangeFeed {
  const listeners = new Listeners();
  return {
    connected: true,
    announce: () => {
      listeners.notify();
      return Promise.resolve();
    },
    subscribe: (listener) => listeners.add(listener),
    close: () => Promise.resolve(),
  };
}

/**
 * A feed on `channel` of the Redis that `redis` is connected to. The subscription runs on a
 * connection of its own (a subscribed connection can send nothing else). Channels are not
 * key-prefixed by ioredis: pass the deployment's prefix in `channel`.
 */
export async function createRedisChangeFeed(
  redis: Redis,
  options: { channel: string; onError: (error: unknown) => void },
): Promise<ChangeFeed> {
  const listeners = new Listeners();
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: true });
  let connected = false;
  const setConnected = (value: boolean) => {
    if (connected === value) return;
    connected = value;
    listeners.notify();
  };
  subscriber.on('error', () => undefined);
  subscriber.on('message', (channel: string) => {
    if (channel === options.channel) listeners.notify();
  });
  subscriber.on('close', () => setConnected(false));
  // After a reconnect: connected again once the subscription is in place (SUBSCRIBE is
  // idempotent, so ioredis's own re-subscription does no harm).
  subscriber.on('ready', () => {
    subscriber.subscribe(options.channel).then(() => setConnected(true), options.onError);
  });
  await subscriber.connect();
  await subscriber.subscribe(options.channel);
  setConnected(true);
  return {
    get connected() {
      return connected;
    },
    async announce() {
      listeners.notify();
      try {
        await redis.publish(options.channel, '1');
      } catch (error) {
        options.onError(error);
      }
    },
    subscribe: (listener) => listeners.add(listener),
    async close() {
      subscriber.disconnect();
      await Promise.resolve();
    },
  };
}

/** The channel of the registry's change feed for a deployment's Redis key prefix. */
export function registryChangesChannel(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}registry-changes`;
}

/**
 * The registry's change feed of a process: on Redis when it has one (every edge and
 * auth-flow process on that Redis and key prefix hears it), else within the process.
 */
export async function openRegistryChangeFeed(
  redis: Redis | undefined,
  options: { redisKeyPrefix: string; onAnnounceFailed: (error: unknown) => void },
): Promise<ChangeFeed> {
  if (redis === undefined) return createLocalChangeFeed();
  return createRedisChangeFeed(redis, {
    channel: registryChangesChannel(options.redisKeyPrefix),
    onError: options.onAnnounceFailed,
  });
}
