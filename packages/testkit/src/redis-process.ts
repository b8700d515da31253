import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { unusedLocalPort } from './unused-local-port.js';

// Private redis-server processes for tests: each on free ports of 127.0.0.1, with its files
// in a temporary folder, stopped by the test that started it. The Cluster and Sentinel
// harnesses (redis-cluster.ts, redis-sentinel.ts) are built from these.

export type RedisAddress = { host: string; port: number };

/**
 * The certificate files of processes that listen on TLS only: the server's certificate and
 * key, and the CA that signed it (which the harness trusts for its own connections).
 */
export type RedisTlsFiles = { certFile: string; keyFile: string; caFile: string };

/** How the harness reaches its processes: their password and, when TLS-only, their CA. */
export type RedisAccess = {
  readonly password: string | undefined;
  readonly tls?: RedisTlsFiles | undefined;
};

/**
 * The settings (name, value) that make a redis-server or Sentinel listen on `port`: with
 * `tls`, on TLS only, with its certificate; clients need no certificate of their own.
 */
export function listenSettings(port: number, tls: RedisTlsFiles | undefined): [string, string][] {
  if (tls === undefined) return [['port', String(port)]];
  return [
    ['port', '0'],
    ['tls-port', String(port)],
    ['tls-cert-file', tls.certFile],
    ['tls-key-file', tls.keyFile],
    ['tls-ca-cert-file', tls.caFile],
    ['tls-auth-clients', 'no'],
  ];
}

/** `listenSettings` as redis-server arguments. */
export function listenArgs(port: number, tls: RedisTlsFiles | undefined): string[] {
  return listenSettings(port, tls).flatMap(([name, value]) => [`--${name}`, value]);
}

/** A roomy deadline for what a healthy local Redis does in milliseconds. */
export const REDIS_EVENT_TIMEOUT_MS = 30_000;
const POLL_MS = 50;
const STOP_TIMEOUT_MS = 10_000;

/** Every process started here and not yet stopped, killed if the test process exits first. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** A temporary folder for the files of one harness, removed by `removeWorkDir`. */
export function makeWorkDir(name: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `gateway-${name}-`));
}

export async function removeWorkDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export type RedisProcess = {
  readonly address: RedisAddress;
  readonly logFile: string;
  /** Resolves once the process has exited (at once when it already has). */
  stop(): Promise<void>;
  /** SIGKILL, as a crash or a lost machine ends it: no shutdown, no last write. */
  kill(): Promise<void>;
  /** True once the process has exited. */
  readonly exited: boolean;
};

/**
 * Starts `redis-server <args>` and waits until it answers PING (with `password` when set).
 * Fails with the end of its log when it exits first, as it does when its port was taken in
 * the meantime.
 */
export async function spawnRedisProcess(options: {
  args: readonly string[];
  address: RedisAddress;
  logFile: string;
  password?: string | undefined;
  /** The process listens on TLS only (its arguments say so): PING over TLS. */
  tls?: RedisTlsFiles | undefined;
}): Promise<RedisProcess> {
  killAllOnExit();
  const child = spawn('redis-server', [...options.args], { stdio: 'ignore' });
  running.add(child);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    const done = () => {
      exited = true;
      running.delete(child);
      resolve();
    };
    child.once('exit', done);
    child.once('error', done);
  });
  const handle: RedisProcess = {
    address: options.address,
    logFile: options.logFile,
    get exited() {
      return exited;
    },
    stop: () => stopProcess(child, exit),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
  };
  try {
    const access = { password: options.password, tls: options.tls };
    await answersPing(options.address, access, () => exited);
  } catch (error) {
    await handle.stop();
    const log = await readFile(options.logFile, 'utf8').catch(() => '');
    const tail = log.trimEnd().split('\n').slice(-5).join('\n');
    throw new Error(`redis-server on port ${options.address.port} did not start:\n${tail}`, {
      cause: error,
    });
  }
  return handle;
}

/** Polls PING until it answers; gives up at once when the process has exited. */
async function answersPing(
  address: RedisAddress,
  access: RedisAccess,
  hasExited: () => boolean,
): Promise<void> {
  const deadline = Date.now() + REDIS_EVENT_TIMEOUT_MS;
  for (;;) {
    if (hasExited()) throw new Error('redis-server exited');
    if ((await ping(address, access).catch(() => undefined)) === 'PONG') return;
    if (Date.now() > deadline) throw new Error('redis-server did not answer PING in time');
    await sleep(POLL_MS);
  }
}

async function stopProcess(child: ChildProcess, exit: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return exit;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exit;
  clearTimeout(timer);
}

/** PING on a connection of its own, closed again; rejects while nothing answers. */
async function ping(address: RedisAddress, access: RedisAccess): Promise<string> {
  return withConnection(address, access, (redis) => redis.ping());
}

/** The CA certificates read so far, by file: polls connect every 50 ms. */
const caCertificates = new Map<string, Buffer>();

function caCertificate(file: string): Buffer {
  let ca = caCertificates.get(file);
  if (ca === undefined) {
    ca = readFileSync(file);
    caCertificates.set(file, ca);
  }
  return ca;
}

/**
 * Runs `use` on a short-lived connection to one Redis or Sentinel process that never
 * retries, so a poll that finds it down fails at once and the next poll tries again.
 * `access` is the password (or none) and, for a TLS-only process, its TLS files.
 */
export async function withConnection<T>(
  address: RedisAddress,
  access: RedisAccess,
  use: (redis: Redis) => Promise<T>,
): Promise<T> {
  const { password, tls } = access;
  const redis = new Redis({
    ...address,
    ...(password === undefined ? {} : { password }),
    ...(tls === undefined ? {} : { tls: { ca: caCertificate(tls.caFile) } }),
    lazyConnect: true,
    connectTimeout: 2_000,
    commandTimeout: 5_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    // Only when not already ended: ioredis's disconnect() of an ended connection arms a
    // timer that nothing clears, which holds the test process open.
    if (redis.status !== 'end') redis.disconnect();
  }
}

/**
 * Resolves once `replica` has applied every write its master had taken when this is called:
 * its processed replication offset reaches the master's. Later writes are not waited for.
 */
export async function waitForReplication(
  master: RedisAddress,
  replica: RedisAddress,
  access: RedisAccess,
): Promise<void> {
  const offset = async (address: RedisAddress, field: string) =>
    Number(
      infoFields(await withConnection(address, access, (redis) => redis.info('replication'))).get(
        field,
      ),
    );
  const target = await offset(master, 'master_repl_offset');
  const deadline = Date.now() + REDIS_EVENT_TIMEOUT_MS;
  while ((await offset(replica, 'slave_repl_offset').catch(() => -1)) < target) {
    if (Date.now() > deadline) throw new Error('the replica did not catch up with its master');
    await sleep(POLL_MS);
  }
}

/** `field:value` lines of an INFO or CLUSTER INFO reply, by field. */
export function infoFields(reply: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of reply.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** `count` free ports of 127.0.0.1, none of them in `taken` (which gains them). */
export async function freePorts(count: number, taken: Set<number> = new Set()): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await unusedLocalPort();
    if (!taken.has(port)) {
      taken.add(port);
      ports.push(port);
    }
  }
  return ports;
}

/** Starts processes with fresh ports until one starts (a port may be taken in between). */
export async function spawnOnFreePort(
  start: (port: number) => Promise<RedisProcess>,
  taken: Set<number>,
): Promise<RedisProcess> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const [port = 0] = await freePorts(1, taken);
    try {
      return await start(port);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** Stops every process (in parallel) and removes the folder, whatever fails on the way. */
export async function stopAll(processes: readonly RedisProcess[], dir: string): Promise<void> {
  await Promise.allSettled(processes.map((each) => each.stop()));
  await removeWorkDir(dir);
}
