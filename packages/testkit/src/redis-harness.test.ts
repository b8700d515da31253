// The Redis harnesses against real redis-server processes: a private server with and without
// persistence, a six-node Cluster and a Sentinel setup, each failing over and stopping every
// process it started.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { startRedisServer, type PrivateRedis } from './private-redis.js';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';
import {
  makeWorkDir,
  removeWorkDir,
  spawnRedisProcess,
  withConnection,
  type RedisAddress,
} from './redis-process.js';
import { startRedisSentinel, type RedisSentinelSetup } from './redis-sentinel.js';
import { unusedLocalPort } from './unused-local-port.js';

const PASSWORD = 'harness-password';
const ACCESS = { password: PASSWORD };

/** Whether anything answers PING at `address` (with the password) right now. */
const answers = (address: RedisAddress): Promise<boolean> =>
  withConnection(address, ACCESS, (redis) => redis.ping()).then(
    (reply) => reply === 'PONG',
    () => false,
  );

describe('startRedisServer', () => {
  const started: PrivateRedis[] = [];
  afterAll(async () => {
    for (const server of started) await server.stop();
  });

  async function serverWith(key: string, persistence: 'none' | 'aof') {
    const server = await startRedisServer({ persistence, password: PASSWORD });
    started.push(server);
    await withConnection(server.address, ACCESS, (redis) => redis.set(key, persistence));
    return server;
  }

  it('keeps what it was given over a restart with AOF, and nothing without persistence', async () => {
    const [durable, volatile] = await Promise.all([
      serverWith('kept', 'aof'),
      serverWith('lost', 'none'),
    ]);
    expect(existsSync(join(durable.dir, 'appendonlydir'))).toBe(true);
    await Promise.all([durable.restart(), volatile.restart()]);
    expect(await withConnection(durable.address, ACCESS, (redis) => redis.get('kept'))).toBe('aof');
    expect(await withConnection(volatile.address, ACCESS, (redis) => redis.get('lost'))).toBe(null);
    expect(durable.env).toEqual({ REDIS_URL: durable.url, REDIS_PASSWORD: PASSWORD });
  });

  it('stop() ends the process and removes its folder', async () => {
    const server = await startRedisServer({ password: PASSWORD });
    expect(await answers(server.address)).toBe(true);
    await server.stop();
    expect(await answers(server.address)).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
  });

  it('a process that cannot start fails with the end of its log and leaves nothing running', async () => {
    const dir = await makeWorkDir('redis-bad');
    const port = await unusedLocalPort();
    const logFile = join(dir, 'redis.log');
    try {
      await expect(
        spawnRedisProcess({
          args: ['--port', String(port), '--logfile', logFile, '--no-such-setting', 'x'],
          address: { host: '127.0.0.1', port },
          logFile,
        }),
      ).rejects.toThrow(/did not start/);
      expect(await answers({ host: '127.0.0.1', port })).toBe(false);
    } finally {
      await removeWorkDir(dir);
    }
  });
});

describe('startRedisCluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ password: PASSWORD });
    client = new Cluster(
      cluster.nodes.map((node) => ({ ...node })),
      { redisOptions: { password: PASSWORD } },
    );
  });
  afterAll(async () => {
    if (client?.status !== 'end') client?.disconnect();
    await cluster?.stop();
  });

  it('is three masters with one replica each, serving every slot', async () => {
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.env.REDIS_CLUSTER_NODES?.split(',')).toHaveLength(6);
    const masters = await Promise.all(
      cluster.nodes.map((node) =>
        withConnection(
          node,
          ACCESS,
          async (redis) => (await redis.info('replication')).match(/role:(\w+)/)?.[1],
        ),
      ),
    );
    expect(masters.filter((role) => role === 'master')).toHaveLength(3);
    const keys = Array.from({ length: 30 }, (_, index) => `key-${index}`);
    await Promise.all(keys.map((key) => client.set(key, key)));
    expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys);
  });

  it("fails the master of a key's slot over to its replica, keeping the key", async () => {
    await client.set('moving', 'along');
    const { from, to } = await cluster.failover('moving');
    expect(to).not.toEqual(from);
    const role = await withConnection(to, ACCESS, (redis) => redis.info('replication'));
    expect(role).toContain('role:master');
    expect(await client.get('moving')).toBe('along');
  });

  it('stop() ends every node and removes the folder', async () => {
    client.disconnect();
    await cluster.stop();
    const still = await Promise.all(cluster.nodes.map(answers));
    expect(still).toEqual(cluster.nodes.map(() => false));
    expect(existsSync(cluster.dir)).toBe(false);
  });
});

describe('startRedisSentinel', () => {
  let setup: RedisSentinelSetup;
  let client: Redis;
  beforeAll(async () => {
    setup = await startRedisSentinel({ password: PASSWORD });
    client = new Redis({
      sentinels: setup.sentinels.map((sentinel) => ({ ...sentinel })),
      name: setup.masterName,
      password: PASSWORD,
      sentinelPassword: PASSWORD,
    });
  });
  afterAll(async () => {
    if (client?.status !== 'end') client?.disconnect();
    await setup?.stop();
  });

  it('has every Sentinel name the master, which a Sentinel client writes to', async () => {
    expect(await setup.master()).toEqual(setup.servers[0]);
    await client.set('written', 'through sentinel');
    const replica = setup.servers[1] ?? { host: '', port: 0 };
    expect(await withConnection(replica, ACCESS, (redis) => redis.info('replication'))).toContain(
      'role:slave',
    );
  });

  it('fails over to the replica, which every Sentinel then names, with the data', async () => {
    const { from, to } = await setup.failover();
    expect(from).toEqual(setup.servers[0]);
    expect(to).toEqual(setup.servers[1]);
    expect(await setup.master()).toEqual(to);
    expect(await withConnection(to, ACCESS, (redis) => redis.get('written'))).toBe(
      'through sentinel',
    );
  });

  it('stop() ends every process and removes the folder', async () => {
    client.disconnect();
    await setup.stop();
    const addresses = [...setup.servers, ...setup.sentinels];
    expect(await Promise.all(addresses.map(answers))).toEqual(addresses.map(() => false));
    expect(existsSync(setup.dir)).toBe(false);
  });
});
