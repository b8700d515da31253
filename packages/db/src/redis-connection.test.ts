// connectRedis against the real Redis: the commands of one turn of the event loop
// leave the socket together at the turn's end, in order, and each gets its own answer; in
// Cluster and Sentinel mode against a local Cluster and Sentinel setup.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Command, Redis } from 'ioredis';
import {
  createTestRedis,
  startRedisCluster,
  startRedisSentinel,
  startTcpProxy,
  waitFor,
  type RedisAddress,
  type RedisCluster,
  type RedisSentinelSetup,
  type TestRedis,
} from '@gateway/testkit';
import { connectRedis, type RedisClient } from './redis-connection.js';

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

describe('connectRedis in Cluster and Sentinel mode', () => {
  const PASSWORD = 'connection-password';
  let cluster: RedisCluster;
  let sentinel: RedisSentinelSetup;
  const opened: RedisClient[] = [];
  beforeAll(async () => {
    [cluster, sentinel] = await Promise.all([
      startRedisCluster({ password: PASSWORD }),
      startRedisSentinel({ password: PASSWORD }),
    ]);
  });
  afterAll(async () => {
    for (const connection of opened) {
      if (connection.status !== 'end') connection.disconnect();
    }
    await cluster?.stop();
    await sentinel?.stop();
  });

  async function connectCluster(keyPrefix = 'gw:'): Promise<Cluster> {
    const connection = await connectRedis({ ...cluster.connection, keyPrefix, timeoutMs: 2_000 });
    opened.push(connection);
    return connection;
  }

  async function connectSentinel(keyPrefix = 'gw:'): Promise<Redis> {
    const connection = await connectRedis({ ...sentinel.connection, keyPrefix, timeoutMs: 2_000 });
    opened.push(connection);
    return connection;
  }

  /** A raw connection to the server that holds `key` in the Cluster (or the master). */
  const rawGet = async (address: RedisAddress, key: string) => {
    const raw = new Redis({ ...address, password: PASSWORD, lazyConnect: true });
    try {
      await raw.connect();
      return await raw.get(key);
    } finally {
      raw.disconnect();
    }
  };

  it('answers a Cluster for Cluster mode and a Redis for Sentinel mode, both with the key prefix and scripts', async () => {
    const onCluster = await connectCluster();
    const onSentinel = await connectSentinel();
    expect(onCluster).toBeInstanceOf(Cluster);
    expect(onSentinel).toBeInstanceOf(Redis);
    for (const connection of [onCluster, onSentinel] as RedisClient[]) {
      connection.defineCommand('gatewayTestTwice', {
        numberOfKeys: 1,
        lua: "return redis.call('INCRBY', KEYS[1], 2)",
      });
      const twice = (connection as unknown as Record<string, (key: string) => Promise<number>>)
        .gatewayTestTwice;
      expect(await twice?.call(connection, 'counted')).toBe(2);
      expect(await connection.get('counted')).toBe('2');
    }
    // The prefix is added once: the servers hold gw:counted.
    const unprefixed = await connectRedis({ ...cluster.connection, timeoutMs: 2_000 });
    opened.push(unprefixed);
    expect(await unprefixed.get('gw:counted')).toBe('2');
    expect(await unprefixed.get('gw:gw:counted')).toBeNull();
    expect(await rawGet(await sentinel.master(), 'gw:counted')).toBe('2');
  });

  it("batches the writes of one turn on each node's connection", async () => {
    const onCluster = await connectCluster('batch:');
    await Promise.all(Array.from({ length: 30 }, (_, i) => onCluster.set(`warm-${i}`, '1')));
    const replies = Array.from({ length: 200 }, (_, i) => onCluster.set(`key-${i}`, String(i)));
    const corked = onCluster.nodes('master').filter((node) => node.stream.writableCorked === 1);
    expect(corked.length).toBeGreaterThan(1);
    expect(await Promise.all(replies)).toEqual(replies.map(() => 'OK'));
    await nextTurn();
    expect(onCluster.nodes('master').map((node) => node.stream.writableCorked)).toEqual(
      onCluster.nodes('master').map(() => 0),
    );
  });

  it('never sends a command again once its caller has its answer (a deadline passed)', async () => {
    const onCluster = await connectCluster('settled:');
    await onCluster.set('kept', 'before');
    const command = new Command('set', ['settled:kept', 'after']);
    command.reject(new Error('Command timed out'));
    await expect(command.promise).rejects.toThrow('Command timed out');
    // As a redirection or a retry after a failover would: straight to every node.
    for (const node of onCluster.nodes('master')) node.sendCommand(command);
    expect(await onCluster.get('kept')).toBe('before');
  });

  it('follows a Cluster failover and a Sentinel failover, the data still there', async () => {
    const onCluster = await connectCluster('failover:');
    const onSentinel = await connectSentinel('failover:');
    await onCluster.set('key', 'cluster');
    await onSentinel.set('key', 'sentinel');
    await Promise.all([cluster.failover('failover:key'), sentinel.failover()]);
    // Commands during the switch may fail (fast, within their deadline); then they succeed.
    const settled = { timeoutMs: 30_000, intervalMs: 100, what: 'commands after the failover' };
    await waitFor(async () => (await onCluster.get('key')) === 'cluster', settled);
    await waitFor(async () => (await onSentinel.set('key', 'written after')) === 'OK', settled);
    expect(await rawGet(await sentinel.master(), 'failover:key')).toBe('written after');
  });

  it('follows a Sentinel failover announced while it was already reconnecting', async () => {
    // The first Sentinel it asks is behind a proxy that the test can hold, so the
    // connection is still asking it when the other Sentinels announce the new master.
    const [first, ...others] = sentinel.sentinels as [RedisAddress, ...RedisAddress[]];
    const proxy = await startTcpProxy(first);
    try {
      const onSentinel = await connectRedis({
        ...sentinel.connection,
        sentinels: [{ host: '127.0.0.1', port: proxy.port }, ...others],
        keyPrefix: 'announced:',
        timeoutMs: 2_000,
      });
      opened.push(onSentinel);
      await onSentinel.set('key', 'before');
      await proxy.stall();
      // The master drops this connection; reconnecting, it asks the held Sentinel.
      const reconnecting = new Promise((resolve) => onSentinel.once('connecting', resolve));
      const raw = new Redis({ ...(await sentinel.master()), password: PASSWORD });
      await raw.client('KILL', 'ADDR', `127.0.0.1:${onSentinel.stream.localPort}`);
      raw.disconnect();
      await reconnecting;
      await sentinel.failover();
      await proxy.restore();
      const settled = { timeoutMs: 30_000, intervalMs: 100, what: 'commands after the failover' };
      await waitFor(
        async () => (await onSentinel.set('key', 'after').catch(() => '')) === 'OK',
        settled,
      );
      expect(await rawGet(await sentinel.master(), 'announced:key')).toBe('after');
    } finally {
      await proxy.close();
    }
  });

  it('fails at once, saying why and never with the password, when the password is wrong or missing', async () => {
    for (const connection of [cluster.connection, sentinel.connection]) {
      const wrong = connectRedis({ ...connection, password: 'not-the-password', timeoutMs: 2_000 });
      await expect(wrong).rejects.toThrow(/^Redis refused the password \(REDIS_PASSWORD/);
      await expect(wrong).rejects.not.toThrow(/not-the-password|connection-password/);
      await expect(
        connectRedis({ ...connection, password: undefined, timeoutMs: 2_000 }),
      ).rejects.toThrow('Redis requires a password and none was given (REDIS_PASSWORD)');
    }
  });

  it('answers at once with an error while disconnected, in Cluster mode too', async () => {
    const onCluster = await connectCluster();
    onCluster.disconnect();
    await expect(onCluster.get('anything')).rejects.toThrow();
  });
});
