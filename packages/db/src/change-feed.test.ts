// The change feed. The local feed within one process; the Redis feed against real Redis in
// each mode (one server, a Cluster, Sentinel), where two feeds on two connections stand for
// two gateway processes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  createTestRedis,
  startRedisCluster,
  startRedisSentinel,
  startTcpProxy,
  waitFor,
} from '@gateway/testkit';
import type { RedisAddress, TcpProxy, TestRedis } from '@gateway/testkit';
import {
  createLocalChangeFeed,
  createRedisChangeFeed,
  registryChangesChannel,
  type ChangeFeed,
} from './change-feed.js';
import { connectRedis, type RedisClient, type RedisEndpoint } from './redis-connection.js';

/** Counts a feed's listener calls, and notes `connected` as each call saw it. */
function listen(feed: ChangeFeed) {
  const seen: boolean[] = [];
  const unsubscribe = feed.subscribe(() => seen.push(feed.connected));
  return {
    seen,
    get calls() {
      return seen.length;
    },
    unsubscribe,
  };
}

const soon = (what: string) => ({ timeoutMs: 10_000, intervalMs: 10, what });
const slow = (what: string) => ({ timeoutMs: 30_000, intervalMs: 200, what });

describe('createLocalChangeFeed', () => {
  it('is always connected and calls every listener synchronously on announce', async () => {
    const feed = createLocalChangeFeed();
    const first = listen(feed);
    const second = listen(feed);
    expect(feed.connected).toBe(true);

    const announced = feed.announce();
    // Before anything is awaited: the listeners have already run.
    expect(first.calls).toBe(1);
    expect(second.calls).toBe(1);
    await expect(announced).resolves.toBeUndefined();
    expect(first.seen).toEqual([true]);
  });

  it('stops calling a listener once it unsubscribed, and keeps calling the others', async () => {
    const feed = createLocalChangeFeed();
    const gone = listen(feed);
    const kept = listen(feed);
    await feed.announce();
    gone.unsubscribe();
    await feed.announce();
    expect(gone.calls).toBe(1);
    expect(kept.calls).toBe(2);
    await feed.close();
  });
});

describe('registryChangesChannel', () => {
  it("is the deployment's key prefix followed by registry-changes", () => {
    expect(registryChangesChannel('gw:')).toBe('gw:registry-changes');
  });
});

/**
 * A Redis of one mode for the feeds of a test, and the server-side views the tests check:
 * subscriber counts and pub/sub connections over every node (one server, every Cluster node,
 * the master Sentinel names).
 */
type FeedRedis = {
  connection: RedisEndpoint;
  keyPrefix: string;
  subscribersOf(channel: string): Promise<number>;
  /** Every pub/sub connection, as `<port>/<client id>`. */
  pubsubClients(): Promise<Set<string>>;
  kill(client: string): Promise<void>;
  /** Fails the Redis over (Cluster and Sentinel); undefined for one server. */
  failover?: () => Promise<unknown>;
  stop(): Promise<void>;
};

/** A short-lived connection to one server, for the checks. */
async function onServer<T>(
  address: RedisAddress,
  password: string | undefined,
  use: (redis: Redis) => Promise<T>,
): Promise<T> {
  const redis = new Redis({ ...address, password, lazyConnect: true, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** Pub/sub views summed over `servers()` (every node, or the master of the moment). */
function viewsOver(servers: () => Promise<readonly RedisAddress[]>, password?: string) {
  return {
    async subscribersOf(channel: string) {
      const counts = await Promise.all(
        (await servers()).map((server) =>
          onServer(server, password, async (redis) => {
            const [, count] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
            return count;
          }),
        ),
      );
      return counts.reduce((sum, count) => sum + count, 0);
    },
    async pubsubClients() {
      const lists = await Promise.all(
        (await servers()).map((server) =>
          onServer(server, password, async (redis) => {
            const list = (await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
            return [...list.matchAll(/^id=(\d+) /gm)].map((match) => `${server.port}/${match[1]}`);
          }),
        ),
      );
      return new Set(lists.flat());
    },
    async kill(client: string) {
      const [port, id] = client.split('/');
      const server = (await servers()).find((each) => String(each.port) === port);
      if (server === undefined || id === undefined) throw new Error(`no client ${client}`);
      expect(
        await onServer(server, password, (redis) => redis.call('CLIENT', 'KILL', 'ID', id)),
      ).toBe(1);
    },
  };
}

const PASSWORD = 'feed-password';

const modes: { name: string; failsOver: boolean; open(): Promise<FeedRedis> }[] = [
  {
    name: 'one Redis server',
    failsOver: false,
    async open() {
      const testRedis = await createTestRedis();
      const url = new URL(testRedis.url);
      const server = { host: url.hostname, port: Number(url.port || 6379) };
      const password = url.password === '' ? undefined : decodeURIComponent(url.password);
      return {
        connection: { url: testRedis.url },
        keyPrefix: testRedis.keyPrefix,
        ...viewsOver(async () => [server], password),
        stop: () => testRedis.cleanup(),
      };
    },
  },
  {
    name: 'a Redis Cluster',
    failsOver: true,
    async open() {
      const cluster = await startRedisCluster({ password: PASSWORD });
      return {
        connection: cluster.connection,
        keyPrefix: 'gw:',
        ...viewsOver(async () => cluster.nodes, PASSWORD),
        failover: () => cluster.failover(),
        stop: () => cluster.stop(),
      };
    },
  },
  {
    name: 'Redis Sentinel',
    failsOver: true,
    async open() {
      const setup = await startRedisSentinel({ password: PASSWORD });
      return {
        connection: setup.connection,
        keyPrefix: 'gw:',
        // Sentinel mode subscribes on the master.
        ...viewsOver(async () => [await setup.master()], PASSWORD),
        failover: () => setup.failover(),
        stop: () => setup.stop(),
      };
    },
  },
];

describe.each(modes)('createRedisChangeFeed on $name', (mode) => {
  let redis: FeedRedis;
  /** Feeds still to close after each test (each closed once: see closeFeed). */
  const opened = new Set<{ feed: ChangeFeed; redis: RedisClient }>();
  let channelCount = 0;

  beforeAll(async () => {
    redis = await mode.open();
  });
  afterEach(async () => {
    for (const handle of opened) await closeFeed(handle);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** A channel of this test's own, named as a deployment would name it. */
  const newChannel = () => registryChangesChannel(`${redis.keyPrefix}${++channelCount}:`);

  /** One "process": its own connection (as connectRedis makes it) and a feed on it. */
  async function openFeed(channel: string) {
    const errors: unknown[] = [];
    const connection = await connectRedis({
      ...redis.connection,
      keyPrefix: redis.keyPrefix,
      timeoutMs: 2_000,
    });
    const feed = await createRedisChangeFeed(connection, {
      channel,
      onError: (error) => errors.push(error),
    });
    const handle = { feed, redis: connection, errors };
    opened.add(handle);
    return handle;
  }

  // Once only: ioredis's disconnect() of a connection already closed arms a 2 s timer that
  // nothing clears, which would hold Jest past the end of the run.
  async function closeFeed(handle: { feed: ChangeFeed; redis: RedisClient }): Promise<void> {
    opened.delete(handle);
    await handle.feed.close();
    if (handle.redis.status !== 'end') handle.redis.disconnect();
  }

  it('is connected once created, subscribed on exactly the channel it was given', async () => {
    const channel = newChannel();
    const { feed } = await openFeed(channel);
    expect(feed.connected).toBe(true);
    // Not key-prefixed by ioredis: the connection's keyPrefix is not added to the channel.
    expect(await redis.subscribersOf(channel)).toBe(1);
    expect(await redis.subscribersOf(`${redis.keyPrefix}${channel}`)).toBe(0);
  });

  it("reaches the other process's listeners, and the announcer's own at once", async () => {
    const channel = newChannel();
    const announcer = await openFeed(channel);
    const other = await openFeed(channel);
    const own = listen(announcer.feed);
    const heard = listen(other.feed);

    const announced = announcer.feed.announce();
    expect(own.calls).toBe(1); // synchronously, before Redis was asked anything
    expect(heard.calls).toBe(0);
    await announced;
    await waitFor(async () => heard.calls === 1, soon('the other feed to hear the announcement'));
    expect(heard.seen).toEqual([true]);
    expect(announcer.errors).toEqual([]);
    expect(other.errors).toEqual([]);

    // Both ways.
    await other.feed.announce();
    await waitFor(async () => own.calls >= 2, soon('the first feed to hear the second'));
  });

  it('hears nothing announced on another channel', async () => {
    const channel = newChannel();
    const mine = await openFeed(channel);
    const elsewhere = await openFeed(newChannel());
    const marker = await openFeed(channel);
    const heard = listen(mine.feed);
    await elsewhere.feed.announce();
    // Published after the other channel's announcement: once this one has arrived, the
    // other would have too.
    await marker.feed.announce();
    await waitFor(async () => heard.calls === 1, soon('the marker announcement'));
    expect(heard.calls).toBe(1);
  });

  it('turns disconnected when its subscription is killed, tells its listeners, and is back after the reconnect', async () => {
    const channel = newChannel();
    const announcer = await openFeed(channel);
    const before = await redis.pubsubClients();
    const subscriber = await openFeed(channel);
    const newClients = [...(await redis.pubsubClients())].filter((id) => !before.has(id));
    // The one pubsub connection that appeared while the feed was created: its subscription.
    // (Another process subscribing at that very moment would fail this, not mislead it.)
    expect(newClients).toHaveLength(1);
    const heard = listen(subscriber.feed);

    await redis.kill(newClients[0] ?? '');
    await waitFor(async () => !subscriber.feed.connected, soon('the feed to notice the kill'));
    expect(heard.seen[0]).toBe(false);

    // ioredis reconnects on its own, and the feed with it.
    await waitFor(async () => subscriber.feed.connected, soon('the feed to reconnect'));
    expect(heard.seen).toEqual([false, true]);
    expect(await redis.subscribersOf(channel)).toBe(2);

    const callsBefore = heard.calls;
    await announcer.feed.announce();
    await waitFor(
      async () => heard.calls === callsBefore + 1,
      soon('an announcement after the reconnect'),
    );
    expect(subscriber.errors).toEqual([]);
  });

  it('never rejects an announcement it cannot publish: own listeners run, onError is told', async () => {
    const channel = newChannel();
    const { feed, redis: connection, errors } = await openFeed(channel);
    const own = listen(feed);
    connection.disconnect(); // the publishing connection; the subscription has its own

    await expect(feed.announce()).resolves.toBeUndefined();
    expect(own.calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
  });

  it('close() ends the subscription: nothing more is heard', async () => {
    const channel = newChannel();
    const announcer = await openFeed(channel);
    const closing = await openFeed(channel);
    const heard = listen(closing.feed);
    await closeFeed(closing);
    await waitFor(async () => (await redis.subscribersOf(channel)) === 1, soon('the unsubscribe'));

    const callsAfterClose = heard.calls;
    const echo = listen(announcer.feed);
    await announcer.feed.announce();
    // The announcer's own subscription hears its echo (its second call): by then the closed
    // feed would have heard the announcement too.
    await waitFor(async () => echo.calls === 2, soon("the announcer's echo"));
    expect(heard.calls).toBe(callsAfterClose);
  });

  // Only a Cluster or a Sentinel setup has a replica to fail over to.
  const itWithFailover = mode.failsOver ? it : () => undefined;
  itWithFailover('hears announcements made after a failover', async () => {
    const channel = newChannel();
    const announcer = await openFeed(channel);
    const subscriber = await openFeed(channel);
    const heard = listen(subscriber.feed);
    await redis.failover?.();
    await waitFor(async () => subscriber.feed.connected, soon('the feed after the failover'));
    // Announce until one arrives: a publish made while the master was changing is lost,
    // which is what `connected` (false meanwhile) tells the caches.
    await waitFor(async () => {
      await announcer.feed.announce();
      return heard.seen.includes(true);
    }, slow('an announcement after the failover'));
  });
});

describe('createRedisChangeFeed while Redis is unreachable', () => {
  let testRedis: TestRedis;
  let proxy: TcpProxy;
  const connections: RedisClient[] = [];
  const feeds: ChangeFeed[] = [];
  beforeAll(async () => {
    testRedis = await createTestRedis();
    const { hostname, port } = new URL(testRedis.url);
    proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
  });
  afterAll(async () => {
    for (const feed of feeds) await feed.close();
    for (const connection of connections) connection.disconnect();
    await proxy?.close();
    await testRedis?.cleanup();
  });

  async function openFeed(channel: string, url: string) {
    const errors: unknown[] = [];
    const connection = await connectRedis({
      url,
      keyPrefix: testRedis.keyPrefix,
      timeoutMs: 2_000,
    });
    connections.push(connection);
    const feed = await createRedisChangeFeed(connection, {
      channel,
      onError: (error) => errors.push(error),
    });
    feeds.push(feed);
    return { feed, errors };
  }

  it('is disconnected, announces without rejecting, and hears again once Redis is back', async () => {
    const channel = registryChangesChannel(testRedis.keyPrefix);
    const cutOff = await openFeed(channel, `redis://127.0.0.1:${proxy.port}`);
    const other = await openFeed(channel, testRedis.url);
    const heard = listen(cutOff.feed);

    await proxy.cut();
    await waitFor(async () => !cutOff.feed.connected, soon('the feed to lose Redis'));
    expect(heard.seen[0]).toBe(false);

    await expect(cutOff.feed.announce()).resolves.toBeUndefined();
    expect(cutOff.errors).toHaveLength(1);

    await proxy.restore();
    await waitFor(async () => cutOff.feed.connected, soon('the feed to be back'));
    const callsBefore = heard.calls;
    await other.feed.announce();
    await waitFor(async () => heard.calls > callsBefore, soon('an announcement once back'));
  });
});
