import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { connect as connectTls } from 'node:tls';

/** A `host:port` of a Sentinel or a Cluster node. */
export type RedisAddress = { readonly host: string; readonly port: number };

type Credentials = {
  /** Password of every node (and Sentinel); in single mode a password in the URL works too. */
  readonly password?: string | undefined;
  /** TLS to every node (and Sentinel); a `rediss://` URL turns it on as well. */
  readonly tls?: boolean | undefined;
};

/** One Redis server. */
export type SingleRedisEndpoint = Credentials & { readonly mode?: 'single'; readonly url: string };
/** The master that Redis Sentinel names, followed through its failovers. */
export type SentinelRedisEndpoint = Credentials & {
  readonly mode: 'sentinel';
  readonly sentinels: readonly RedisAddress[];
  readonly masterName: string;
};
/** A Redis Cluster, found from some of its nodes. */
export type ClusterRedisEndpoint = Credentials & {
  readonly mode: 'cluster';
  readonly nodes: readonly RedisAddress[];
};
/** Where the Redis is, in one of three modes (the configuration's `config.redis`). */
export type RedisEndpoint = SingleRedisEndpoint | SentinelRedisEndpoint | ClusterRedisEndpoint;

export type RedisConnectionOptions<E extends RedisEndpoint = RedisEndpoint> = E & {
  /** Prefix of every key (tests give each file its own). */
  keyPrefix?: string;
  /** Deadline to connect, and of each command while connected. */
  timeoutMs: number;
};

/**
 * A connection in any mode: `Redis` for one server and for Sentinel, `Cluster` for a Redis
 * Cluster. Both have every command and `defineCommand`, so code written against this type
 * runs in every mode; a Lua script's keys must share a hash slot in Cluster mode.
 */
export type RedisClient = Redis | Cluster;

/**
 * Connects to Redis and fails fast while it is unreachable: commands are not queued for a
 * later reconnect (no offline queue), so a caller gets an error within the deadline and
 * fails closed, and ioredis keeps reconnecting in the background until Redis is back. In
 * Sentinel mode it asks the Sentinels for the master again after a failover; in Cluster
 * mode it follows the cluster's redirections and failovers.
 */
export function connectRedis(
  options: RedisConnectionOptions<ClusterRedisEndpoint>,
): Promise<Cluster>;
export function connectRedis(
  options: RedisConnectionOptions<SingleRedisEndpoint | SentinelRedisEndpoint>,
): Promise<Redis>;
export function connectRedis(options: RedisConnectionOptions): Promise<RedisClient>;
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisClient> {
  if (options.mode === 'cluster') return connectCluster(options);
  const redis =
    options.mode === 'sentinel'
      ? new Redis({ ...connectionOptions(options), ...sentinelOptions(options) })
      : new Redis(options.url, connectionOptions(options));
  // Without a listener ioredis reports every failed reconnect as an unhandled error.
  redis.on('error', () => undefined);
  reconnectUnlessClosed(redis);
  batchWritesPerTurn(redis);
  traceCommands(redis);
  await connectOrExplain(redis, 'error', tlsProbe(options));
  return redis;
}

/**
 * Connects, and fails with an error that says why: ioredis reports a refused password as a
 * closed connection (one server) or as no node available (Cluster), and in Sentinel mode
 * retries it forever, so a gateway would hang at start; a refused certificate reads as a
 * closed connection too, and on a Cluster's or the Sentinels' connections ioredis drops the
 * TLS error altogether: then one TLS handshake with the first node or Sentinel (`probe`)
 * finds it. The error quotes Redis's reply or the TLS error, which never hold the password.
 * A failed client is disconnected, so it does not go on reconnecting.
 */
async function connectOrExplain(
  client: RedisClient,
  event: 'error' | 'node error',
  probe?: () => Promise<Error | undefined>,
) {
  let lastError: Error | undefined;
  let onError: (error: Error) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => {
    onError = (error) => {
      lastError = error;
      const refusal = credentialsRefusal(error);
      if (refusal !== undefined) reject(refusal);
    };
  });
  client.on(event, onError);
  const connecting = client.connect();
  try {
    await Promise.race([connecting, refused]);
  } catch (error) {
    connecting.catch(() => undefined);
    // Only when not already ended: ioredis's disconnect() of an ended connection arms a
    // timer that nothing clears.
    if (client.status !== 'end') client.disconnect();
    if (!saysOnlyClosed(error)) throw error;
    const reason = (saysOnlyClosed(lastError) ? await probe?.() : undefined) ?? lastError;
    if (reason === undefined) throw error;
    throw new Error(`Could not connect to Redis: ${reason.message}`, { cause: reason });
  } finally {
    client.off(event, onError);
  }
}

/**
 * A connection ends only when the gateway closes it (QUIT or disconnect). ioredis can end
 * one on its own: in Sentinel mode, when the Sentinels announce the new master
 * (+switch-master) while the connection is already reconnecting after its master died, the
 * announcement cancels the reconnection in progress and ioredis gives up for good, so every
 * later command fails with "Connection is closed." Such a connection is connected again.
 * Only after the first connection: a failure at start is the caller's to report.
 */
export function reconnectUnlessClosed(redis: Redis): void {
  let closing = false;
  const disconnect = redis.disconnect.bind(redis);
  redis.disconnect = (reconnect = false) => {
    if (!reconnect) closing = true;
    disconnect(reconnect);
  };
  const quit = redis.quit.bind(redis);
  redis.quit = ((...args: Parameters<Redis['quit']>) => {
    closing = true;
    return quit(...args);
  }) as Redis['quit'];
  redis.once('ready', () => {
    redis.on('end', () => {
      if (closing) return;
      setTimeout(() => {
        if (!closing && redis.status === 'end') redis.connect().catch(() => undefined);
      }, reconnectDelay(1));
    });
  });
}

/** Redis's refusals of the credentials: a wrong password (WRONGPASS), none given (NOAUTH). */
const CREDENTIALS_REFUSED = /\b(WRONGPASS|NOAUTH)\b/;

function credentialsRefusal(error: Error): Error | undefined {
  const reply = CREDENTIALS_REFUSED.exec(error.message);
  if (reply === null) return undefined;
  const message =
    reply[1] === 'NOAUTH'
      ? 'Redis requires a password and none was given (REDIS_PASSWORD)'
      : 'Redis refused the password (REDIS_PASSWORD, or the password in REDIS_URL)';
  return new Error(message, { cause: error });
}

/**
 * Whether an error only says that the connection closed, that no node answered or that no
 * Sentinel did (whose last error then says the connection closed).
 */
function saysOnlyClosed(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /^(Connection is closed|None of startup nodes is available|All sentinels are unreachable.*Connection is closed)/.test(
    message,
  );
}

/**
 * With TLS in Sentinel or Cluster mode: a TLS handshake with the first Sentinel or node,
 * which resolves to its error when it fails (e.g. a certificate no trusted CA signed), and
 * to undefined when it succeeds, or nothing answers within the deadline.
 */
function tlsProbe(options: RedisConnectionOptions): (() => Promise<Error | undefined>) | undefined {
  const first =
    options.mode === 'cluster'
      ? options.nodes[0]
      : options.mode === 'sentinel'
        ? options.sentinels[0]
        : undefined;
  if (options.tls !== true || first === undefined) return undefined;
  return () =>
    new Promise((resolve) => {
      const socket = connectTls({ host: first.host, port: first.port, timeout: options.timeoutMs });
      const done = (error?: Error) => {
        socket.destroy();
        resolve(error);
      };
      socket.once('secureConnect', () => done());
      socket.once('timeout', () => done());
      socket.once('error', done);
    });
}

/** Milliseconds before the next reconnection attempt: soon at first, then every 2 s. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 200, 2_000);

/**
 * The fail-fast settings of every connection to a Redis server, in every mode (a Cluster's
 * connections to its nodes included): deadlines, no re-send, credentials.
 */
function serverConnectionOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    maxRetriesPerRequest: 1,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    // A command whose caller already got its time-out error must not run later. By
    // default ioredis re-sends unanswered commands after a reconnect, so a handoff consume
    // answered 503 would still redeem the code once Redis is back, and the code be lost.
    autoResendUnfulfilledCommands: false,
    // Commands go out one write per turn of the event loop (batchWritesPerTurn),
    // not through ioredis's auto-pipelining.
    enableAutoPipelining: false,
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.tls === true ? { tls: {} } : {}),
  };
}

/** A single or Sentinel connection: no offline queue, the key prefix, reconnection. */
function connectionOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    ...serverConnectionOptions(options),
    lazyConnect: true,
    enableOfflineQueue: false,
    keyPrefix: options.keyPrefix ?? '',
    retryStrategy: reconnectDelay,
  };
}

/** Rounds over every Sentinel before a connection attempt fails. */
const SENTINEL_ROUNDS = 3;

function sentinelOptions(options: SentinelRedisEndpoint): RedisOptions {
  const tls = options.tls === true;
  return {
    sentinels: options.sentinels.map(({ host, port }) => ({ host, port })),
    name: options.masterName,
    role: 'master',
    ...(options.password === undefined ? {} : { sentinelPassword: options.password }),
    // When no Sentinel answers (or each refuses the connection, as with a certificate no
    // trusted CA signed), the connection fails after three rounds over the Sentinels instead
    // of asking them forever: connecting at start fails with an error rather than hanging,
    // and a connection that was ready connects again (reconnectUnlessClosed).
    sentinelRetryStrategy: (round) => (round > SENTINEL_ROUNDS ? null : reconnectDelay(round)),
    ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // Listens to the Sentinels' +switch-master and reconnects at once, rather than writing to
    // a demoted master until Sentinel reconfigures it (and closes its clients).
    failoverDetector: true,
    // A write refused by a replica (READONLY) means the master moved: ask the Sentinels
    // again. The refused command fails to its caller; it is not sent again.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
}

/**
 * A Cluster with the same fail-fast settings: per-node connections (Redis instances made by
 * the Cluster, `redisOptions`) carry the deadlines and no re-send; the Cluster itself has no
 * offline queue. Each node's connection batches its writes per turn, and a command already
 * answered (its deadline passed) is never sent again by a redirection or a retry after a
 * failover; one span per command is made at the Cluster, not per node tried.
 */
async function connectCluster(options: RedisConnectionOptions<ClusterRedisEndpoint>) {
  // The key prefix is the Cluster's (a node's would be added a second time).
  const clusterOptions: ClusterOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    keyPrefix: options.keyPrefix ?? '',
    enableAutoPipelining: false,
    clusterRetryStrategy: reconnectDelay,
    slotsRefreshTimeout: options.timeoutMs,
    redisOptions: serverConnectionOptions(options),
    // TLS certificates name the hosts as configured: connect to the names, not their addresses.
    ...(options.tls === true ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
  };
  const cluster = new Cluster(
    options.nodes.map(({ host, port }) => ({ host, port })),
    clusterOptions,
  );
  cluster.on('error', () => undefined);
  cluster.on('node error', () => undefined);
  cluster.on('+node', (node: Redis) => {
    node.on('error', () => undefined);
    neverResendAnswered(node);
    batchWritesPerTurn(node);
  });
  traceCommands(cluster);
  await connectOrExplain(cluster, 'node error', tlsProbe(options));
  return cluster;
}

/**
 * A Cluster sends a command again after a MOVED or ASK reply and after its node's connection
 * closed. When the command's deadline has passed by then, its caller already has the error:
 * sending it would run it anyway (a handoff consumed after the 503). Such a command is dropped.
 */
function neverResendAnswered(node: Redis): void {
  const send = node.sendCommand.bind(node);
  node.sendCommand = (command, stream) => {
    if (command.isSettled) return command.promise;
    return send(command, stream);
  };
}

/**
 * A `redis.<command>` CLIENT span per command sent (pipelines and MULTI excepted), with the
 * command name only: never keys or values. A failure other than Redis's own reply (e.g. the
 * NOSCRIPT that makes ioredis fall back from EVALSHA to EVAL) is a `redis` dependency error.
 */
export function traceCommands(redis: RedisClient): void {
  // A Cluster's sendCommand takes the node as well; a server connection ignores it.
  const target: { sendCommand: Cluster['sendCommand'] } = redis;
  const send = target.sendCommand.bind(redis);
  target.sendCommand = (command, stream, node) => {
    const span = startDependencySpan(`redis.${command.name}`, {
      'db.system.name': 'redis',
      'db.operation.name': command.name.toUpperCase(),
    });
    const answer = send(command, stream, node);
    command.promise.then(
      () => span.end(),
      (error: unknown) => {
        const reply = (error as { name?: unknown } | null)?.name === 'ReplyError';
        failDependencySpan(span, error, reply ? undefined : 'redis');
      },
    );
    return answer;
  };
}

/**
 * The commands of one turn of the event loop leave in one write (one system call)
 * instead of one each, which under load was an eighth of the auth-flow service's CPU. The
 * connection's socket is corked when a turn sends its first command and uncorked in the same
 * turn's check phase (setImmediate), after every I/O callback of the turn has run.
 *
 * ioredis's own auto-pipelining did the same with a pipeline per turn, but sends one pipeline
 * at a time and queues the next one's commands meanwhile, and wraps each command in pipeline
 * objects: under load the commands lived long enough that they were most of what the gateway
 * promoted to V8's old generation (1.6 KB per introspection; `pnpm bench --alloc-survivors`),
 * and so of its major collections. Here each command goes to the connection's reply queue at
 * once, as without batching; only the write waits for the turn's end.
 */
function batchWritesPerTurn(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: { uncork(): void } | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  redis.sendCommand = (command, stream) => {
    if (corked === undefined && stream === undefined && redis.status === 'ready') {
      const socket = redis.stream;
      socket.cork();
      corked = socket;
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}
