import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  freePorts,
  infoFields,
  listenArgs,
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

const run = promisify(execFile);

export type RedisCluster = {
  /** The folder of the nodes' files and logs (removed by stop). */
  readonly dir: string;
  /** The six nodes: three masters with one replica each, at start. */
  readonly nodes: readonly RedisAddress[];
  /** For connectRedis. */
  readonly connection: {
    mode: 'cluster';
    nodes: readonly RedisAddress[];
    password: string | undefined;
    /** Present (true) when the nodes listen on TLS only. */
    tls?: boolean;
  };
  /**
   * The gateway variables that name this cluster (REDIS_CLUSTER_NODES, REDIS_PASSWORD,
   * REDIS_TLS).
   */
  readonly env: Record<string, string>;
  /**
   * A manual failover (CLUSTER FAILOVER on a replica) of the master serving `key`'s slot
   * (slot 0 without a key). Resolves once the replica is master, every node agrees and the
   * cluster state is ok everywhere.
   */
  failover(key?: string): Promise<{ from: RedisAddress; to: RedisAddress }>;
  /**
   * The master serving `key`'s slot (slot 0 without a key) crashes: once its replica has every
   * write the master had taken (their replication offsets), the master process is killed
   * (SIGKILL); the other nodes find it failed after the node timeout (2 s) and its replica
   * takes over. Resolves once every live node names the replica for the slot and reports the
   * cluster ok; the killed process stays down.
   */
  killMaster(key?: string): Promise<{ from: RedisAddress; to: RedisAddress }>;
  /** Stops every process and removes the folder. */
  stop(): Promise<void>;
};

const NODE_COUNT = 6;
const poll = (what: string) => ({ timeoutMs: REDIS_EVENT_TIMEOUT_MS, intervalMs: 50, what });

/**
 * A Redis Cluster of six local redis-server processes (three masters, one replica each),
 * made with `redis-cli --cluster create`, on free ports with their files in a temp folder.
 * Resolves once every node reports cluster_state:ok and every replica is in sync.
 * With `tls`, every node listens on TLS only, with that certificate, and the nodes talk TLS
 * to each other (cluster bus and replication).
 */
export async function startRedisCluster(
  options: { password?: string; tls?: RedisTlsFiles } = {},
): Promise<RedisCluster> {
  const { password, tls } = options;
  const access: RedisAccess = { password, tls };
  const dir = await makeWorkDir('redis-cluster');
  const processes: RedisProcess[] = [];
  try {
    // Each node's data port and cluster bus port, all distinct.
    const ports = await freePorts(NODE_COUNT * 2);
    const started = await Promise.allSettled(
      Array.from({ length: NODE_COUNT }, (_, index) =>
        startNode({
          dir,
          index,
          port: ports[index * 2] ?? 0,
          busPort: ports[index * 2 + 1] ?? 0,
          password,
          tls,
        }),
      ),
    );
    for (const each of started) if (each.status === 'fulfilled') processes.push(each.value);
    const failed = started.find((each) => each.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const nodes = processes.map((each) => each.address);
    await createCluster(nodes, access);
    await waitFor(() => clusterSettled(nodes, access), poll('the cluster to settle'));
    return {
      dir,
      nodes,
      connection: { mode: 'cluster', nodes, password, ...(tls === undefined ? {} : { tls: true }) },
      env: {
        REDIS_CLUSTER_NODES: nodes.map((node) => `${node.host}:${node.port}`).join(','),
        ...(password === undefined ? {} : { REDIS_PASSWORD: password }),
        ...(tls === undefined ? {} : { REDIS_TLS: 'true' }),
      },
      failover: (key) => failOver(nodes, access, key),
      killMaster: (key) => killMaster(processes, access, key),
      stop: () => stopAll(processes, dir),
    };
  } catch (error) {
    await stopAll(processes, dir);
    throw error;
  }
}

function startNode(options: {
  dir: string;
  index: number;
  port: number;
  busPort: number;
  password: string | undefined;
  tls: RedisTlsFiles | undefined;
}): Promise<RedisProcess> {
  const { dir, index, port, busPort, password, tls } = options;
  const file = (name: string) => join(dir, `node-${index}-${name}`);
  return spawnRedisProcess({
    args: [
      ...listenArgs(port, tls),
      ...(tls === undefined ? [] : ['--tls-cluster', 'yes', '--tls-replication', 'yes']),
      ...['--bind', '127.0.0.1', '--dir', dir],
      ...['--logfile', file('redis.log'), '--daemonize', 'no', '--save', '', '--appendonly', 'no'],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', file('nodes.conf')],
      ...['--cluster-port', String(busPort), '--cluster-node-timeout', '2000'],
      // A replica syncs at once instead of after the default 5 s wait for other replicas.
      ...['--repl-diskless-sync-delay', '0'],
      ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
    ],
    address: { host: '127.0.0.1', port },
    logFile: file('redis.log'),
    password,
    tls,
  });
}

async function createCluster(nodes: readonly RedisAddress[], { password, tls }: RedisAccess) {
  const auth = [
    ...(password === undefined ? [] : ['-a', password, '--no-auth-warning']),
    ...(tls === undefined ? [] : ['--tls', '--cacert', tls.caFile]),
  ];
  const addresses = nodes.map((node) => `${node.host}:${node.port}`);
  await run(
    'redis-cli',
    [...auth, '--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'],
    { timeout: REDIS_EVENT_TIMEOUT_MS },
  );
}

/**
 * Every node: state ok, all slots served, and it sees three masters with one replica each
 * (roles reach the other nodes by gossip, after `redis-cli` returns); every replica in sync.
 */
async function clusterSettled(
  nodes: readonly RedisAddress[],
  access: RedisAccess,
): Promise<boolean> {
  const settled = await Promise.all(
    nodes.map(async (node) => {
      const [cluster, replication] = await withConnection(node, access, async (redis) => [
        infoFields(String(await redis.call('CLUSTER', 'INFO'))),
        infoFields(await redis.info('replication')),
      ]);
      const view = await clusterNodes(node, access);
      const replicas = view.filter((line) => !line.master && line.masterId !== '-');
      return (
        cluster?.get('cluster_state') === 'ok' &&
        cluster.get('cluster_slots_ok') === '16384' &&
        view.length === NODE_COUNT &&
        replicas.length === NODE_COUNT / 2 &&
        new Set(replicas.map((line) => line.masterId)).size === NODE_COUNT / 2 &&
        (replication?.get('role') === 'master' || replication?.get('master_link_status') === 'up')
      );
    }),
  );
  return settled.every(Boolean);
}

type ClusterNodeLine = { id: string; address: RedisAddress; master: boolean; masterId: string };

/** CLUSTER NODES as one node sees the cluster. */
async function clusterNodes(node: RedisAddress, access: RedisAccess) {
  const reply = String(
    await withConnection(node, access, (redis) => redis.call('CLUSTER', 'NODES')),
  );
  return reply
    .trim()
    .split('\n')
    .map((line): ClusterNodeLine => {
      const [id = '', endpoint = '', flags = '', masterId = ''] = line.split(' ');
      const [host = '', port = ''] = endpoint.split('@')[0]?.split(':') ?? [];
      return {
        id,
        address: { host, port: Number(port) },
        master: flags.split(',').includes('master'),
        masterId,
      };
    });
}

/** The slot of `key` (0 without one), its master and that master's replica. */
async function shardOf(
  nodes: readonly RedisAddress[],
  access: RedisAccess,
  key: string | undefined,
): Promise<{ slot: number; from: RedisAddress; to: RedisAddress }> {
  const first = nodes[0] ?? { host: '127.0.0.1', port: 0 };
  const slot = Number(
    key === undefined
      ? 0
      : await withConnection(first, access, (redis) => redis.call('CLUSTER', 'KEYSLOT', key)),
  );
  const from = await masterOfSlot(first, access, slot);
  const lines = await clusterNodes(from, access);
  const fromId = lines.find((line) => sameAddress(line.address, from))?.id;
  const replica = lines.find((line) => !line.master && line.masterId === fromId);
  if (replica === undefined) {
    throw new Error(`no replica of ${from.host}:${from.port} in ${JSON.stringify(lines)}`);
  }
  return { slot, from, to: replica.address };
}

async function failOver(
  nodes: readonly RedisAddress[],
  access: RedisAccess,
  key: string | undefined,
): Promise<{ from: RedisAddress; to: RedisAddress }> {
  const { slot, from, to } = await shardOf(nodes, access, key);
  await withConnection(to, access, (redis) => redis.call('CLUSTER', 'FAILOVER'));
  await waitFor(async () => {
    const views = await Promise.all(nodes.map((node) => masterOfSlot(node, access, slot)));
    return views.every((view) => sameAddress(view, to)) && (await clusterSettled(nodes, access));
  }, poll('the failover to complete'));
  return { from, to };
}

async function killMaster(
  processes: readonly RedisProcess[],
  access: RedisAccess,
  key: string | undefined,
): Promise<{ from: RedisAddress; to: RedisAddress }> {
  const live = processes.filter((each) => !each.exited).map((each) => each.address);
  const { slot, from, to } = await shardOf(live, access, key);
  const master = processes.find((each) => sameAddress(each.address, from));
  if (master === undefined) throw new Error(`no process at ${from.host}:${from.port}`);
  await waitForReplication(from, to, access);
  await master.kill();
  const others = live.filter((node) => !sameAddress(node, from));
  await waitFor(async () => {
    const views = await Promise.all(
      others.map(async (node) => {
        const info = infoFields(
          String(await withConnection(node, access, (redis) => redis.call('CLUSTER', 'INFO'))),
        );
        return (
          info.get('cluster_state') === 'ok' &&
          sameAddress(await masterOfSlot(node, access, slot), to)
        );
      }),
    );
    return views.every(Boolean);
  }, poll('the replica to take over from the killed master'));
  return { from, to };
}

/** The master serving `slot` as `node` sees it. */
async function masterOfSlot(
  node: RedisAddress,
  access: RedisAccess,
  slot: number,
): Promise<RedisAddress> {
  const ranges = (await withConnection(node, access, (redis) =>
    redis.call('CLUSTER', 'SLOTS'),
  )) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
  const range = ranges.find(([start, end]) => start <= slot && slot <= end);
  if (range === undefined) throw new Error(`slot ${slot} is not served`);
  const [host, port] = range[2];
  return { host, port };
}

const sameAddress = (a: RedisAddress, b: RedisAddress): boolean =>
  a.host === b.host && a.port === b.port;
