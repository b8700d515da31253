// The start-up check of whether Redis keeps the sessions over a restart, against private
// redis-server processes with and without persistence, a Redis that refuses CONFIG (as
// managed Redis does), a Cluster and a Sentinel setup.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
import {
  startRedisCluster,
  startRedisSentinel,
  startRedisServer,
  type PrivateRedis,
  type RedisCluster,
  type RedisSentinelSetup,
} from '@gateway/testkit';
import { connectRedis, type RedisClient, type RedisEndpoint } from './redis-connection.js';
import {
  assessRedisDurability,
  checkRedisKeepsSessions,
  RedisNotDurableError,
} from './redis-durability.js';

const PASSWORD = 'durability-password';
const started: { stop(): Promise<void> }[] = [];
const connections: RedisClient[] = [];

afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  await Promise.all(started.map((each) => each.stop()));
});

async function server(persistence: 'none' | 'aof' | 'rdb'): Promise<PrivateRedis> {
  const redis = await startRedisServer({ persistence, password: PASSWORD });
  started.push(redis);
  return redis;
}

async function connect(endpoint: RedisEndpoint): Promise<RedisClient> {
  const connection = await connectRedis({ ...endpoint, timeoutMs: 2_000 });
  connections.push(connection);
  return connection;
}

/** The check as a process runs it, with what it logged at warn or above. */
async function check(redis: RedisClient, required: boolean) {
  const log = createMemoryLog();
  const logger = createLogger({ service: 'test', level: 'info', destination: log.destination });
  const outcome = await checkRedisKeepsSessions(redis, { required, logger }).then(
    (durability) => ({ refused: undefined, durability }),
    (error: unknown) => ({ refused: error, durability: undefined }),
  );
  const warnings = log
    .lines()
    .filter((line) => ['warn', 'error', 'fatal'].includes(String(line.level)));
  return { ...outcome, warnings, lines: log.lines() };
}

describe('one Redis server', () => {
  it('without persistence: a warning naming the fix, or a refusal when persistence is required', async () => {
    const redis = await connect((await server('none')).connection);
    expect((await assessRedisDurability(redis)).masters).toEqual([
      expect.objectContaining({ aof: false, rdb: false, replicas: 0, verdict: 'lost' }),
    ]);
    const warned = await check(redis, false);
    expect(warned.refused).toBeUndefined();
    expect(warned.warnings).toHaveLength(1);
    expect(warned.warnings[0]?.msg).toMatch(
      /^Redis keeps no copy of the sessions .* a restart of Redis signs every user out\. Turn on appendonly/,
    );
    expect(warned.warnings[0]?.msg).toContain('REDIS_REQUIRE_PERSISTENCE=true');

    const refused = await check(redis, true);
    expect(refused.refused).toBeInstanceOf(RedisNotDurableError);
    expect((refused.refused as Error).message).toMatch(
      /^Refusing to start: REDIS_REQUIRE_PERSISTENCE is true, and Redis keeps no copy/,
    );
  });

  it.each(['aof', 'rdb'] as const)(
    'with %s persistence: no warning and no refusal',
    async (persistence) => {
      const redis = await connect((await server(persistence)).connection);
      for (const required of [false, true]) {
        const outcome = await check(redis, required);
        expect(outcome.refused).toBeUndefined();
        expect(outcome.warnings).toEqual([]);
        expect(outcome.durability?.verdict).toBe('kept');
      }
    },
  );

  it('refusing CONFIG, as managed Redis does: INFO tells about AOF, and a refusal when it cannot tell', async () => {
    const plain = await server('none');
    const durable = await server('aof');
    const limited = async (redis: PrivateRedis) => {
      const admin = await connect(redis.connection);
      await admin.call(
        'ACL',
        'SETUSER',
        'gateway',
        'on',
        '>gateway-pw',
        '~*',
        '&*',
        '+@all',
        '-config',
      );
      return connect({ url: `redis://gateway:gateway-pw@127.0.0.1:${redis.address.port}` });
    };
    const [onPlain, onDurable] = await Promise.all([limited(plain), limited(durable)]);
    await expect(onPlain.call('CONFIG', 'GET', 'appendonly')).rejects.toThrow(/NOPERM/);

    expect((await assessRedisDurability(onDurable)).verdict).toBe('kept');
    const unsure = await assessRedisDurability(onPlain);
    expect(unsure.masters).toEqual([
      expect.objectContaining({ aof: false, rdb: undefined, replicas: 0, verdict: 'unknown' }),
    ]);
    const told = await check(onPlain, false);
    expect(told.refused).toBeUndefined();
    expect(told.warnings).toEqual([]);
    expect(told.lines.map((line) => line.msg)).toContain(
      'Redis does not say whether it keeps the sessions over a restart (CONFIG and INFO were refused).',
    );
    expect((await check(onPlain, true)).refused).toBeInstanceOf(RedisNotDurableError);
  });
});

describe('Cluster and Sentinel', () => {
  let cluster: RedisCluster;
  let sentinel: RedisSentinelSetup;
  beforeAll(async () => {
    [cluster, sentinel] = await Promise.all([
      startRedisCluster({ password: PASSWORD }),
      startRedisSentinel({ password: PASSWORD }),
    ]);
    started.push(cluster, sentinel);
  });

  it('keep the sessions on a replica of every master, without AOF or RDB', async () => {
    for (const endpoint of [cluster.connection, sentinel.connection]) {
      const redis = await connect(endpoint);
      const outcome = await check(redis, true);
      expect(outcome.refused).toBeUndefined();
      expect(outcome.warnings).toEqual([]);
      const masters = outcome.durability?.masters ?? [];
      expect(masters).toHaveLength(endpoint === cluster.connection ? 3 : 1);
      for (const master of masters) {
        expect(master).toMatchObject({ aof: false, rdb: false, replicas: 1, verdict: 'kept' });
      }
    }
  });
});
