import { Cluster, type Redis } from 'ioredis';
import { reconnectUnlessClosed, type RedisClient } from './redis-connection.js';

/**
 * Tells the caches of every gateway process that shared data changed: the edge
 * keeps verified platform credentials, the auth-flow service the registry's answers about
 * platforms and environments. Whoever commits a change announces it; every subscriber drops
 * what it keeps and asks again.
 *
 * - `createLocalChangeFeed`: one process (the all-in-one gateway without Redis).
 * - `createRedisChangeFeed`: every process on one Redis (split mode, several all-in-one
 *   instances), through pub/sub, in every Redis mode (a Cluster delivers a PUBLISH to the
 *   subscribers of every node; Sentinel mode subscribes on the master). While the
 *   subscription is down a subscriber cannot know what it misses, so `connected` turns false
 *   (caches serve nothing then) and every listener is called when it drops and again when it
 *   is back.
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
  redis: RedisClient,
  options: { channel: string; onError: (error: unknown) => void },
): Promise<ChangeFeed> {
  const listeners = new Listeners();
  let connected = false;
  const setConnected = (value: boolean) => {
    if (connected === value) return;
    connected = value;
    listeners.notify();
  };
  const events: SubscriptionEvents = {
    channel: options.channel,
    onMessage: (channel) => {
      if (channel === options.channel) listeners.notify();
    },
    onDown: () => setConnected(false),
    onUp: () => setConnected(true),
    onError: options.onError,
  };
  const subscription =
    redis instanceof Cluster
      ? await subscribeOnClusterNode(redis, events)
      : await subscribeOnServer(redis, events);
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
      subscription.close();
      await Promise.resolve();
    },
  };
}

/** What a subscription connection tells its feed. */
type SubscriptionEvents = {
  channel: string;
  onMessage(channel: string): void;
  /** The subscription may miss announcements from now on. */
  onDown(): void;
  /** Subscribed (again). */
  onUp(): void;
  onError(error: unknown): void;
};

/** Subscribes `subscriber` now and again after each reconnect, reporting its state. */
function follow(subscriber: Redis, events: SubscriptionEvents): void {
  subscriber.on('error', () => undefined);
  subscriber.on('message', (channel: string) => events.onMessage(channel));
  subscriber.on('close', () => events.onDown());
  // After a reconnect: connected again once the subscription is in place (SUBSCRIBE is
  // idempotent, so ioredis's own re-subscription does no harm).
  subscriber.on('ready', () => {
    subscriber.subscribe(events.channel).then(() => events.onUp(), events.onError);
  });
}

/**
 * One server, or the master Sentinel names: a duplicate of the connection, which reconnects
 * on its own (in Sentinel mode to whichever server is master then).
 */
async function subscribeOnServer(redis: Redis, events: SubscriptionEvents) {
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: true });
  reconnectUnlessClosed(subscriber);
  follow(subscriber, events);
  await subscriber.connect();
  await subscriber.subscribe(events.channel);
  return { close: () => subscriber.disconnect() };
}

/**
 * A Cluster: a connection to one node, as a PUBLISH on any node reaches the subscribers of
 * every node. When the node stays unreachable over a few reconnections, the subscription
 * moves to another node the Cluster knows.
 */
async function subscribeOnClusterNode(cluster: Cluster, events: SubscriptionEvents) {
  let closed = false;
  let current: Redis | undefined;
  let turn = 0;
  const open = async (): Promise<void> => {
    const nodes = cluster.nodes('all');
    const node = nodes[turn++ % Math.max(nodes.length, 1)];
    if (node === undefined) throw new Error('The Redis Cluster has no known node');
    const subscriber = node.duplicate({
      enableOfflineQueue: true,
      lazyConnect: true,
      retryStrategy: (attempt: number) => (attempt > 3 ? null : attempt * 200),
    });
    current = subscriber;
    follow(subscriber, events);
    subscriber.once('end', () => {
      if (closed || current !== subscriber) return;
      setTimeout(() => {
        if (!closed) open().catch(() => undefined);
      }, 200).unref();
    });
    await subscriber.connect();
    await subscriber.subscribe(events.channel);
  };
  try {
    await open();
  } catch (error) {
    closed = true;
    current?.disconnect();
    throw error;
  }
  return {
    close: () => {
      closed = true;
      current?.disconnect();
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
  redis: RedisClient | undefined,
  options: { redisKeyPrefix: string; onAnnounceFailed: (error: unknown) => void },
): Promise<ChangeFeed> {
  if (redis === undefined) return createLocalChangeFeed();
  return createRedisChangeFeed(redis, {
    channel: registryChangesChannel(options.redisKeyPrefix),
    onError: options.onAnnounceFailed,
  });
}
