// The change feed. The local feed within one process; the Redis feed against the
// real Redis, where two feeds on two connections stand for two gateway processes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createTestRedis, startTcpProxy, waitFor } from '@gateway/testkit';
import type { TcpProxy, TestRedis } from '@gateway/testkit';
import {
  createLocalChangeFeed,
  createRedisChangeFeed,
  registryChangesChannel,
  type ChangeFeed,
} from './change-feed.js';
import { connectRedis } from './redis-connection.js';

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

describe('createRedisChangeFeed', () => {
  let testRedis: TestRedis;
  /** A plain connection to look at the server (PUBSUB, CLIENT LIST) and to kill clients. */
  let admin: Redis;
  /** Feeds still to close after each test (each closed once: see closeFeed). */
  const opened = new Set<{ feed: ChangeFeed; redis: Redis }>();
  let channelCount = 0;

  beforeAll(async () => {
    testRedis = await createTestRedis();
    admin = new Redis(testRedis.url, { lazyConnect: true });
    await admin.connect();
  });
  afterEach(async () => {
    for (const handle of opened) await closeFeed(handle);
  });
  afterAll(async () => {
    admin?.disconnect();
    await testRedis?.cleanup();
  });

  /** A channel of this test's own, named as a deployment would name it. */
  const newChannel = () => registryChangesChannel(`${testRedis.keyPrefix}${++channelCount}:`);

  /** One "process": its own connection (as connectRedis makes it) and a feed on it. */
  async function openFeed(channel: string, url = testRedis.url) {
    const errors: unknown[] = [];
    const redis = await connectRedis({ url, keyPrefix: testRedis.keyPrefix, timeoutMs: 2_000 });
    const feed = await createRedisChangeFeed(redis, {
      channel,
      onError: (error) => errors.push(error),
    });
    const handle = { feed, redis, errors };
    opened.add(handle);
    return handle;
  }

  // Once only: ioredis's disconnect() of a connection already closed arms a 2 s timer that
  // nothing clears, which would hold Jest past the end of the run.
  async function closeFeed(handle: { feed: ChangeFeed; redis: Redis }): Promise<void> {
    opened.delete(handle);
    await handle.feed.close();
    if (handle.redis.status !== 'end') handle.redis.disconnect();
  }

  async function subscribersOf(channel: string): Promise<number> {
    const [, count] = (await admin.pubsub('NUMSUB', channel)) as [string, number];
    return count;
  }

  async function pubsubClientIds(): Promise<Set<string>> {
    const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    return new Set([...list.matchAll(/^id=(\d+) /gm)].map((match) => match[1]));
  }

  it('is connected once created, subscribed on exactly the channel it was given', async () => {
    const channel = newChannel();
    const { feed } = await openFeed(channel);
    expect(feed.connected).toBe(true);
    // Not key-prefixed by ioredis: the connection's keyPrefix is not added to the channel.
    expect(await subscribersOf(channel)).toBe(1);
    expect(await subscribersOf(`${testRedis.keyPrefix}${channel}`)).toBe(0);
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
    const before = await pubsubClientIds();
    const subscriber = await openFeed(channel);
    const newIds = [...(await pubsubClientIds())].filter((id) => !before.has(id));
    // The one pubsub connection that appeared while the feed was created: its subscription.
    // (Another process subscribing at that very moment would fail this, not mislead it.)
    expect(newIds).toHaveLength(1);
    const heard = listen(subscriber.feed);

    expect(await admin.call('CLIENT', 'KILL', 'ID', newIds[0])).toBe(1);
    await waitFor(async () => !subscriber.feed.connected, soon('the feed to notice the kill'));
    expect(heard.seen[0]).toBe(false);

    // ioredis reconnects on its own (connectRedis's retry strategy), and the feed with it.
    await waitFor(async () => subscriber.feed.connected, soon('the feed to reconnect'));
    expect(heard.seen).toEqual([false, true]);
    expect(await subscribersOf(channel)).toBe(2);

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
    const { feed, redis, errors } = await openFeed(channel);
    const own = listen(feed);
    redis.disconnect(); // the publishing connection; the subscription has its own

    await expect(feed.announce()).resolves.toBeUndefined();
    expect(own.calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
  });

  describe('while Redis is unreachable', () => {
    let proxy: TcpProxy;
    beforeAll(async () => {
      const { hostname, port } = new URL(testRedis.url);
      proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
    });
    afterAll(() => proxy?.close());

    it('is disconnected, announces without rejecting, and hears again once Redis is back', async () => {
      const channel = newChannel();
      const cutOff = await openFeed(channel, `redis://127.0.0.1:${proxy.port}`);
      const other = await openFeed(channel);
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

  it('close() ends the subscription: nothing more is heard', async () => {
    const channel = newChannel();
    const announcer = await openFeed(channel);
    const closing = await openFeed(channel);
    const heard = listen(closing.feed);
    await closeFeed(closing);
    await waitFor(async () => (await subscribersOf(channel)) === 1, soon('the unsubscribe'));

    const callsAfterClose = heard.calls;
    const echo = listen(announcer.feed);
    await announcer.feed.announce();
    // The announcer's own subscription hears its echo (its second call): by then the closed
    // feed would have heard the announcement too.
    await waitFor(async () => echo.calls === 2, soon("the announcer's echo"));
    expect(heard.calls).toBe(callsAfterClose);
  });
});
