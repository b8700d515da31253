import type { Logger } from '@gateway/telemetry';
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

// Whether the Redis a process got keeps the sessions over a restart of Redis: an AOF or RDB
// file on its disk, or a replica that takes over. Checked at start in production
// (checkRedisKeepsSessions); docs/operations.md, "Redis", says what each mode keeps.

/** What one master (the server, the Sentinel master, each Cluster master) keeps. */
export type MasterDurability = {
  /** `host:port` of the master. */
  readonly server: string;
  /** appendonly; undefined when neither CONFIG nor INFO answered it. */
  readonly aof: boolean | undefined;
  /** RDB snapshots configured (`save` not empty); undefined when CONFIG is refused. */
  readonly rdb: boolean | undefined;
  /** Replicas connected to it; undefined when INFO is refused. */
  readonly replicas: number | undefined;
  /** `kept`: on its disk or on a replica; `lost`: neither; `unknown`: Redis would not say. */
  readonly verdict: 'kept' | 'lost' | 'unknown';
};

export type RedisDurability = {
  readonly mode: 'single or sentinel' | 'cluster';
  readonly masters: readonly MasterDurability[];
  /** `lost` when any master would lose its sessions, `kept` when every one keeps them. */
  readonly verdict: 'kept' | 'lost' | 'unknown';
};

/** Asks every master of `redis`; managed Redis may refuse CONFIG (then INFO persistence). */
export async function assessRedisDurability(redis: RedisClient): Promise<RedisDurability> {
  const masters =
    redis instanceof Cluster
      ? await Promise.all(redis.nodes('master').map((node) => assessMaster(node)))
      : [await assessMaster(redis)];
  const verdicts = new Set(masters.map((master) => master.verdict));
  return {
    mode: redis instanceof Cluster ? 'cluster' : 'single or sentinel',
    masters,
    verdict: verdicts.has('lost') ? 'lost' : verdicts.has('unknown') ? 'unknown' : 'kept',
  };
}

async function assessMaster(redis: Redis): Promise<MasterDurability> {
  const [appendonly, save, persistence, replication] = await Promise.all([
    configValue(redis, 'appendonly'),
    configValue(redis, 'save'),
    infoFields(redis, 'persistence'),
    infoFields(redis, 'replication'),
  ]);
  const aofEnabled = persistence?.get('aof_enabled');
  const aof =
    appendonly !== undefined
      ? appendonly === 'yes'
      : aofEnabled === undefined
        ? undefined
        : aofEnabled === '1';
  const rdb = save === undefined ? undefined : save.trim() !== '';
  const connected = replication?.get('connected_slaves');
  const replicas = connected === undefined ? undefined : Number(connected);
  const keeps = aof === true || rdb === true || (replicas ?? 0) > 0;
  const loses = aof === false && rdb === false && replicas === 0;
  const { host, port } = redis.options;
  return {
    server: `${host ?? ''}:${port ?? ''}`,
    aof,
    rdb,
    replicas,
    verdict: keeps ? 'kept' : loses ? 'lost' : 'unknown',
  };
}

/** CONFIG GET of one parameter, or undefined when CONFIG is refused (managed Redis). */
async function configValue(redis: Redis, parameter: string): Promise<string | undefined> {
  try {
    const reply = (await redis.call('CONFIG', 'GET', parameter)) as unknown[];
    return reply.length >= 2 ? String(reply[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function infoFields(redis: Redis, section: string): Promise<Map<string, string> | undefined> {
  try {
    const reply = await redis.info(section);
    const fields = new Map<string, string>();
    for (const line of reply.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
    }
    return fields;
  } catch {
    return undefined;
  }
}

/** Thrown at start when REDIS_REQUIRE_PERSISTENCE is true and Redis may lose the sessions. */
export class RedisNotDurableError extends Error {
  override readonly name = 'RedisNotDurableError';
}

const HOW_TO_KEEP =
  'Turn on appendonly (or RDB snapshots) on Redis, or give it replicas (Sentinel or Cluster); ' +
  'see docs/operations.md, "Redis".';

/**
 * The start-up check of a process that keeps sessions in Redis, in production: a Redis that
 * keeps no copy of them (no AOF or RDB file, no replica) signs every user out when it
 * restarts. Logs a warning then, or throws RedisNotDurableError when `required`
 * (REDIS_REQUIRE_PERSISTENCE), also when Redis does not say (CONFIG and INFO refused).
 */
export async function checkRedisKeepsSessions(
  redis: RedisClient,
  options: { required: boolean; logger: Logger },
): Promise<RedisDurability> {
  const durability = await assessRedisDurability(redis);
  const details = { redis: { mode: durability.mode, masters: durability.masters } };
  if (durability.verdict === 'kept') {
    options.logger.info(details, 'Redis keeps the sessions over a restart');
    return durability;
  }
  const problem =
    durability.verdict === 'lost'
      ? 'Redis keeps no copy of the sessions (no AOF or RDB persistence and no replica): a ' +
        'restart of Redis signs every user out.'
      : 'Redis does not say whether it keeps the sessions over a restart (CONFIG and INFO ' +
        'were refused).';
  if (options.required) {
    throw new RedisNotDurableError(
      `Refusing to start: REDIS_REQUIRE_PERSISTENCE is true, and ${problem} ${HOW_TO_KEEP}`,
    );
  }
  if (durability.verdict === 'lost') {
    options.logger.warn(
      details,
      `${problem} ${HOW_TO_KEEP} REDIS_REQUIRE_PERSISTENCE=true refuses to start on such a Redis.`,
    );
  } else {
    options.logger.info(details, problem);
  }
  return durability;
}
