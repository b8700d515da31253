import { join } from 'node:path';
import {
  makeWorkDir,
  removeWorkDir,
  spawnOnFreePort,
  spawnRedisProcess,
  withConnection,
  type RedisAddress,
  type RedisProcess,
} from './redis-process.js';

/**
 * What a Redis keeps over a restart: nothing (`none`), its append-only file with one fsync a
 * second (`aof`, as the deployment files run it) or RDB snapshots (`rdb`).
 */
export type RedisPersistence = 'none' | 'aof' | 'rdb';

export type PrivateRedis = {
  readonly address: RedisAddress;
  /** `redis://127.0.0.1:<port>`, without the password. */
  readonly url: string;
  /** The server's folder (its AOF and RDB files). */
  readonly dir: string;
  /** For connectRedis: `{ url, password }`. */
  readonly connection: { mode: 'single'; url: string; password: string | undefined };
  /** The gateway variables that name this server. */
  readonly env: Record<string, string>;
  /**
   * SHUTDOWN (which writes what the persistence setting keeps, and nothing otherwise), then a
   * new redis-server on the same port and folder, answering PING.
   */
  restart(): Promise<void>;
  /** Stops the process and removes its folder. */
  stop(): Promise<void>;
};

/** A redis-server of this test alone, on a free port of 127.0.0.1, its folder in a temp dir. */
export async function startRedisServer(
  options: { persistence?: RedisPersistence; password?: string } = {},
): Promise<PrivateRedis> {
  const dir = await makeWorkDir('redis');
  const { password } = options;
  const launch = (port: number) =>
    spawnRedisProcess({
      args: serverArguments({ port, dir, persistence: options.persistence ?? 'none', password }),
      address: { host: '127.0.0.1', port },
      logFile: join(dir, 'redis.log'),
      password,
    });
  let current: RedisProcess;
  try {
    current = await spawnOnFreePort(launch, new Set());
  } catch (error) {
    await removeWorkDir(dir);
    throw error;
  }
  const { address } = current;
  const url = `redis://${address.host}:${address.port}`;
  return {
    address,
    url,
    dir,
    connection: { mode: 'single', url, password },
    env: { REDIS_URL: url, ...(password === undefined ? {} : { REDIS_PASSWORD: password }) },
    async restart() {
      await withConnection(address, { password }, (redis) => redis.call('SHUTDOWN')).catch(
        () => undefined, // the server closes the connection instead of answering
      );
      await current.stop();
      current = await launch(address.port);
    },
    async stop() {
      await current.stop();
      await removeWorkDir(dir);
    },
  };
}

function serverArguments(options: {
  port: number;
  dir: string;
  persistence: RedisPersistence;
  password: string | undefined;
}): string[] {
  const { port, dir, persistence, password } = options;
  return [
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
    ...['--logfile', join(dir, 'redis.log'), '--daemonize', 'no'],
    ...['--save', persistence === 'rdb' ? '3600 1' : ''],
    ...['--appendonly', persistence === 'aof' ? 'yes' : 'no', '--appendfsync', 'everysec'],
    ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
  ];
}
