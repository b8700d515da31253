import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  freePorts,
  infoFields,
  listenArgs,
  listenSettings,
  makeWorkDir,
  REDIS_EVENT_TIMEOUT_MS,
  spawnRedisProcess,
  stopAll,
  waitForReplication,
  withConnection,
  type RedisAccess,
  type RedisAddress,
  type RedisProcess,
  type RedisTlsFiles,
} from './redis-process.js';
import { waitFor } from './wait-for.js';

export type RedisSentinelSetup = {
  /** The folder of the processes' files and logs (removed by stop). */
  readonly dir: string;
  /** The three Sentinels. */
  readonly sentinels: readonly RedisAddress[];
  readonly masterName: string;
  /** The master and the replica as they are at start (a failover swaps them). */
  readonly servers: readonly RedisAddress[];
  /** For connectRedis. */
  readonly connection: {
    mode: 'sentinel';
    sentinels: readonly RedisAddress[];
    masterName: string;
    password: string | undefined;
    /** Present (true) when the servers and Sentinels listen on TLS only. */
    tls?: boolean;
  };
  /** The gateway variables that name this setup (REDIS_SENTINELS, REDIS_SENTINEL_MASTER, ...). */
  readonly env: Record<string, string>;
  /** The master as every Sentinel names it now. */
  master(): Promise<RedisAddress>;
  /**
   * SENTINEL FAILOVER: the replica becomes master. Resolves once every Sentinel names it and
   * it answers as master.
   */
  failover(): Promise<{ from: RedisAddress; to: RedisAddress }>;
  /**
   * The master crashes: once the replica has every write the master had taken (their
   * replication offsets), the master process is killed (SIGKILL) and the Sentinels, which
   * find it down after a second, promote the replica. Resolves once every Sentinel names the
   * replica and it answers as master; the killed process stays down.
   */
  killMaster(): Promise<{ from: RedisAddress; to: RedisAddress }>;
  /** Stops every process and removes the folder. */
  stop(): Promise<void>;
};

const MASTER_NAME = 'gateway';
const SENTINEL_COUNT = 3;
const poll = (what: string) => ({ timeoutMs: REDIS_EVENT_TIMEOUT_MS, intervalMs: 50, what });

/**
 * Redis with Sentinel from local processes: a master, one replica and three Sentinels
 * (quorum 2), on free ports with their files in a temp folder. Resolves once the replica is
 * in sync and every Sentinel names the master, sees the replica and the two other Sentinels.
 * With `tls`, every process listens on TLS only, with that certificate: the replica
 * replicates over TLS and the Sentinels talk TLS to the servers and to each other.
 */
export async function startRedisSentinel(
  options: { password?: string; tls?: RedisTlsFiles } = {},
): Promise<RedisSentinelSetup> {
  const { password, tls } = options;
  const access: RedisAccess = { password, tls };
  const dir = await makeWorkDir('redis-sentinel');
  const processes: RedisProcess[] = [];
  try {
    const [masterPort = 0, replicaPort = 0, ...sentinelPorts] = await freePorts(2 + SENTINEL_COUNT);
    processes.push(await startServer({ dir, name: 'master', port: masterPort, password, tls }));
    const master = { host: '127.0.0.1', port: masterPort };
    processes.push(
      await startServer({ dir, name: 'replica', port: replicaPort, password, tls, master }),
    );
    const replica = { host: '127.0.0.1', port: replicaPort };
    await waitFor(() => replicaInSync(replica, access), poll('the replica to sync'));
    const started = await Promise.allSettled(
      sentinelPorts.map((port, index) =>
        startSentinel({ dir, index, port, password, tls, master }),
      ),
    );
    for (const each of started) if (each.status === 'fulfilled') processes.push(each.value);
    const failed = started.find((each) => each.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const sentinels = sentinelPorts.map((port) => ({ host: '127.0.0.1', port }));
    await waitFor(
      () => sentinelsAgree(sentinels, access, master),
      poll('the Sentinels to agree on the master and see the replica and each other'),
    );
    return {
      dir,
      sentinels,
      masterName: MASTER_NAME,
      servers: [master, replica],
      connection: {
        mode: 'sentinel',
        sentinels,
        masterName: MASTER_NAME,
        password,
        ...(tls === undefined ? {} : { tls: true }),
      },
      env: {
        REDIS_SENTINELS: sentinels.map((each) => `${each.host}:${each.port}`).join(','),
        REDIS_SENTINEL_MASTER: MASTER_NAME,
        ...(password === undefined ? {} : { REDIS_PASSWORD: password }),
        ...(tls === undefined ? {} : { REDIS_TLS: 'true' }),
      },
      master: () => namedMaster(sentinels, access),
      failover: () => failOver(sentinels, access, [master, replica]),
      killMaster: () => killMaster(sentinels, access, processes.slice(0, 2)),
      stop: () => stopAll(processes, dir),
    };
  } catch (error) {
    await stopAll(processes, dir);
    throw error;
  }
}

function startServer(options: {
  dir: string;
  name: string;
  port: number;
  password: string | undefined;
  tls: RedisTlsFiles | undefined;
  master?: RedisAddress;
}): Promise<RedisProcess> {
  const { dir, name, port, password, tls, master } = options;
  const logFile = join(dir, `${name}.log`);
  return spawnRedisProcess({
    args: [
      ...listenArgs(port, tls),
      ...(tls === undefined ? [] : ['--tls-replication', 'yes']),
      ...['--bind', '127.0.0.1', '--dir', dir],
      ...['--dbfilename', `${name}.rdb`, '--logfile', logFile, '--daemonize', 'no'],
      ...['--save', '', '--appendonly', 'no'],
      // A replica syncs at once instead of after the default 5 s wait for other replicas.
      ...['--repl-diskless-sync-delay', '0'],
      ...(master === undefined ? [] : ['--replicaof', master.host, String(master.port)]),
      ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
    ],
    address: { host: '127.0.0.1', port },
    logFile,
    password,
    tls,
  });
}

async function startSentinel(options: {
  dir: string;
  index: number;
  port: number;
  password: string | undefined;
  tls: RedisTlsFiles | undefined;
  master: RedisAddress;
}): Promise<RedisProcess> {
  const { dir, index, port, password, tls, master } = options;
  const logFile = join(dir, `sentinel-${index}.log`);
  const configFile = join(dir, `sentinel-${index}.conf`);
  // Sentinel rewrites its configuration file, so it gets one of its own. With TLS,
  // tls-replication makes it talk TLS to the servers and to the other Sentinels.
  const lines = [
    ...listenSettings(port, tls).map(([name, value]) => `${name} ${value}`),
    ...(tls === undefined ? [] : ['tls-replication yes']),
    'bind 127.0.0.1',
    `dir ${dir}`,
    `logfile ${logFile}`,
    `sentinel monitor ${MASTER_NAME} ${master.host} ${master.port} 2`,
    // A master that stops answering is down after a second. A Sentinel starts no failover
    // within twice the failover timeout of the last one, so a crash soon after a planned
    // failover (as tests make them) is handled in seconds, not after 20 s.
    `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
    `sentinel failover-timeout ${MASTER_NAME} 3000`,
    ...(password === undefined
      ? []
      : [
          `sentinel auth-pass ${MASTER_NAME} ${password}`,
          `requirepass ${password}`,
          `sentinel sentinel-pass ${password}`,
        ]),
  ];
  await writeFile(configFile, `${lines.join('\n')}\n`);
  return spawnRedisProcess({
    args: [configFile, '--sentinel'],
    address: { host: '127.0.0.1', port },
    logFile,
    password,
    tls,
  });
}

async function replicaInSync(replica: RedisAddress, access: RedisAccess) {
  const replication = await withConnection(replica, access, (redis) => redis.info('replication'));
  return infoFields(replication).get('master_link_status') === 'up';
}

/** Fields of a SENTINEL REPLICAS / SENTINELS entry (a flat name, value list). */
function entryFields(entry: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  const list = Array.isArray(entry) ? entry.map(String) : [];
  for (let index = 0; index + 1 < list.length; index += 2) {
    fields.set(list[index] ?? '', list[index + 1] ?? '');
  }
  return fields;
}

async function sentinelsAgree(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
  master: RedisAddress,
): Promise<boolean> {
  const views = await Promise.all(
    sentinels.map((sentinel) =>
      withConnection(sentinel, access, async (redis) => {
        const named = (await redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as [
          string,
          string,
        ];
        const replicas = (await redis.call('SENTINEL', 'REPLICAS', MASTER_NAME)) as unknown[];
        const others = (await redis.call('SENTINEL', 'SENTINELS', MASTER_NAME)) as unknown[];
        const healthyReplicas = replicas.map(entryFields).filter((fields) => {
          return fields.get('flags') === 'slave' && fields.get('master-link-status') === 'ok';
        });
        return (
          named[0] === master.host &&
          Number(named[1]) === master.port &&
          healthyReplicas.length === 1 &&
          others.length === SENTINEL_COUNT - 1
        );
      }),
    ),
  );
  return views.every(Boolean);
}

async function namedMaster(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
): Promise<RedisAddress> {
  const names = await Promise.all(
    sentinels.map((sentinel) =>
      withConnection(sentinel, access, async (redis) => {
        const [host, port] = (await redis.call(
          'SENTINEL',
          'GET-MASTER-ADDR-BY-NAME',
          MASTER_NAME,
        )) as [string, string];
        return `${host}:${port}`;
      }),
    ),
  );
  const distinct = new Set(names);
  const [only] = distinct;
  if (distinct.size !== 1 || only === undefined) {
    throw new Error(`the Sentinels disagree on the master: ${[...distinct].join(', ')}`);
  }
  const colon = only.lastIndexOf(':');
  return { host: only.slice(0, colon), port: Number(only.slice(colon + 1)) };
}

async function failOver(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
  servers: readonly RedisAddress[],
): Promise<{ from: RedisAddress; to: RedisAddress }> {
  const from = await namedMaster(sentinels, access);
  const to = servers.find((server) => server.port !== from.port);
  const [first] = sentinels;
  if (to === undefined || first === undefined) throw new Error('no replica to fail over to');
  await untilPromotable(sentinels, access, to);
  await withConnection(first, access, (redis) => redis.call('SENTINEL', 'FAILOVER', MASTER_NAME));
  await untilPromoted(sentinels, access, to, 'every Sentinel to name the new master');
  return { from, to };
}

async function killMaster(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
  servers: readonly RedisProcess[],
): Promise<{ from: RedisAddress; to: RedisAddress }> {
  const from = await namedMaster(sentinels, access);
  const master = servers.find((server) => server.address.port === from.port);
  const to = servers.find((server) => server.address.port !== from.port)?.address;
  if (master === undefined || to === undefined) throw new Error('no replica to promote');
  await untilPromotable(sentinels, access, to);
  // The test counts on the replica having what the master had.
  await waitForReplication(from, to, access);
  await master.kill();
  await untilPromoted(
    sentinels,
    access,
    to,
    'every Sentinel to name the replica after the master died',
  );
  return { from, to };
}

/**
 * Until the replica is in sync and every Sentinel sees it up: Sentinel promotes only such a
 * replica (after an earlier failover, the old master once reconfigured).
 */
async function untilPromotable(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
  replica: RedisAddress,
): Promise<void> {
  await waitFor(async () => {
    if (!(await replicaInSync(replica, access))) return false;
    const known = await Promise.all(
      sentinels.map((sentinel) => sentinelSeesReplica(sentinel, access, replica)),
    );
    return known.every(Boolean);
  }, poll('the Sentinels to see the replica up and in sync'));
}

/** Until every Sentinel names `to` as master and it answers as one. */
async function untilPromoted(
  sentinels: readonly RedisAddress[],
  access: RedisAccess,
  to: RedisAddress,
  what: string,
): Promise<void> {
  await waitFor(async () => {
    const named = await namedMaster(sentinels, access);
    if (named.port !== to.port) return false;
    const role = await withConnection(to, access, (redis) => redis.info('replication'));
    return infoFields(role).get('role') === 'master';
  }, poll(what));
}

/** Whether `sentinel` lists `replica` as a replica of the master it names, not down. */
function sentinelSeesReplica(
  sentinel: RedisAddress,
  access: RedisAccess,
  replica: RedisAddress,
): Promise<boolean> {
  return withConnection(sentinel, access, async (redis) => {
    const replicas = (await redis.call('SENTINEL', 'REPLICAS', MASTER_NAME)) as unknown[];
    return replicas.map(entryFields).some((fields) => {
      return (
        fields.get('ip') === replica.host &&
        Number(fields.get('port')) === replica.port &&
        fields.get('flags') === 'slave'
      );
    });
  });
}
