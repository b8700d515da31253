import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import { Redis } from 'ioredis';

export type RedisConnectionOptions = {
  url: string;
  /** Prefix of every key (tests give each file its own). */
  keyPrefix?: string;
  /** Deadline to connect, and of each command while connected. */
  timeoutMs: number;
};

/**
 * Connects to Redis and fails fast while it is unreachable: commands are not queued for a
 * later reconnect (no offline queue), so a caller gets an error within the deadline and
 * fails closed, and ioredis keeps reconnecting in the background until Redis is back.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    keyPrefix: options.keyPrefix ?? '',
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // A command whose caller already got its time-out error must not run later. By
    // default ioredis re-sends unanswered commands after a reconnect, so a handoff consume
    // answered 503 would still redeem the code once Redis is back, and the code be lost.
    autoResendUnfulfilledCommands: false,
    // Commands go out one write per turn of the event loop (batchWritesPerTurn),
    // not through ioredis's auto-pipelining.
    enableAutoPipelining: false,
  });
  // Without a listener ioredis reports every failed reconnect as an unhandled error.
  redis.on('error', () => undefined);
  batchWritesPerTurn(redis);
  traceCommands(redis);
  await redis.connect();
  return redis;
}

/**
 * A `redis.<command>` CLIENT span per command sent (pipelines and MULTI excepted), with the
 * command name only: never keys or values. A failure other than Redis's own reply (e.g. the
 * NOSCRIPT that makes ioredis fall back from EVALSHA to EVAL) is a `redis` dependency error.
 */
export function traceCommands(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    const span = startDependencySpan(`redis.${command.name}`, {
      'db.system.name': 'redis',
      'db.operation.name': command.name.toUpperCase(),
    });
    const answer = send(command, stream);
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
