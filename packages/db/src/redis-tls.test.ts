// connectRedis over TLS against TLS-only redis-server processes (Debian's redis-server is built
// with TLS), each with a throwaway CA and server certificate made by openssl: `rediss://` and
// REDIS_TLS (`tls: true`) connect and verify the certificate, a deployment trusts its private
// CA through NODE_EXTRA_CA_CERTS (read by Node at start, so in a child process), and a server
// whose certificate another CA signed is refused. The same holds in Cluster and Sentinel mode,
// against a TLS-only Cluster and a TLS-only Sentinel setup (servers and Sentinels) of the testkit.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  startRedisCluster,
  startRedisSentinel,
  unusedLocalPort,
  waitFor,
  type RedisCluster,
  type RedisSentinelSetup,
} from '@gateway/testkit';

const run = promisify(execFile);
const connectionModule = fileURLToPath(new URL('./redis-connection.ts', import.meta.url));

/** A CA (`ca-<name>`) and a server certificate for 127.0.0.1 it signs (`server-<name>`). */
async function makeCertificates(dir: string, name: string): Promise<void> {
  const file = (base: string) => join(dir, `${base}-${name}`);
  const openssl = (args: string[]) => run('openssl', args, { cwd: dir });
  await openssl([
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1'],
    ...[
      '-keyout',
      `${file('ca')}.key`,
      '-out',
      `${file('ca')}.crt`,
      '-subj',
      `/CN=Test CA ${name}`,
    ],
  ]);
  await openssl([
    ...['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${file('server')}.key`],
    ...['-out', `${file('server')}.csr`, '-subj', '/CN=127.0.0.1'],
  ]);
  const extensions = `${file('ext')}.cnf`;
  await writeFile(extensions, 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl([
    ...['x509', '-req', '-in', `${file('server')}.csr`, '-CA', `${file('ca')}.crt`],
    ...['-CAkey', `${file('ca')}.key`, '-CAcreateserial', '-out', `${file('server')}.crt`],
    ...['-days', '1', '-extfile', extensions],
  ]);
}

const PASSWORD = 'tls-password';

describe('connectRedis over TLS', () => {
  let dir = '';
  const servers: ChildProcess[] = [];
  const ports = { trusted: 0, foreign: 0 };
  let cluster: RedisCluster | undefined;
  let sentinel: RedisSentinelSetup | undefined;

  /** The certificate files of `server-<name>`, for the testkit's Cluster and Sentinel. */
  const tlsFiles = (name: string) => ({
    certFile: join(dir, `server-${name}.crt`),
    keyFile: join(dir, `server-${name}.key`),
    caFile: join(dir, `ca-${name}.crt`),
  });

  /** A TLS-only redis-server with `server-<name>`'s certificate; resolves once it is ready. */
  async function startTlsRedis(name: string): Promise<number> {
    const port = await unusedLocalPort();
    const logFile = join(dir, `redis-${name}.log`);
    const child = spawn(
      'redis-server',
      [
        ...['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--dir', dir],
        ...['--tls-cert-file', join(dir, `server-${name}.crt`)],
        ...['--tls-key-file', join(dir, `server-${name}.key`)],
        ...['--tls-ca-cert-file', join(dir, `ca-${name}.crt`), '--tls-auth-clients', 'no'],
        ...['--save', '', '--appendonly', 'no', '--logfile', logFile, '--daemonize', 'no'],
      ],
      { stdio: 'ignore' },
    );
    servers.push(child);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(await readFile(logFile, 'utf8'));
        return (await readFile(logFile, 'utf8').catch(() => '')).includes('Ready to accept');
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `the TLS redis-server ${name} to be ready` },
    );
    return port;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-redis-tls-'));
    await Promise.all([makeCertificates(dir, 'a'), makeCertificates(dir, 'b')]);
    // All at once; whatever started is stopped in afterAll, even when another start failed.
    const started = await Promise.allSettled([
      startTlsRedis('a').then((port) => (ports.trusted = port)),
      startTlsRedis('b').then((port) => (ports.foreign = port)),
      startRedisCluster({ password: PASSWORD, tls: tlsFiles('a') }).then((c) => (cluster = c)),
      startRedisSentinel({ password: PASSWORD, tls: tlsFiles('a') }).then((s) => (sentinel = s)),
    ]);
    const failed = started.find((each) => each.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  });

  afterAll(async () => {
    await Promise.allSettled([cluster?.stop(), sentinel?.stop()]);
    await Promise.all(
      servers.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  /**
   * connectRedis in a Node process that trusts CA `ca` (NODE_EXTRA_CA_CERTS): through each
   * endpoint a SET, a GET and a Lua script that reads the key (`OK over tls over tls!`), or
   * the connection's error message.
   */
  async function throughTrustingProcess(endpoints: object[], ca = 'a'): Promise<string[]> {
    const script = `
      const { connectRedis } = await import(${JSON.stringify(connectionModule)});
      const answers = [];
      for (const endpoint of ${JSON.stringify(endpoints)}) {
        try {
          const redis = await connectRedis({ ...endpoint, timeoutMs: 5000 });
          redis.defineCommand('readWith', {
            numberOfKeys: 1,
            lua: "return redis.call('GET', KEYS[1]) .. ARGV[1]",
          });
          const set = await redis.set('tls-key', 'over tls');
          const got = await redis.get('tls-key');
          answers.push(\`\${set} \${got} \${await redis.readWith('tls-key', '!')}\`);
          redis.disconnect();
        } catch (error) {
          answers.push(String(error));
        }
      }
      console.log(JSON.stringify(answers));`;
    const { stdout } = await run(
      process.execPath,
      ['--conditions=@gateway/source', '--import', 'tsx', '--input-type=module', '-e', script],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, `ca-${ca}.crt`) }, timeout: 60_000 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
  }

  it('connects with rediss:// and with tls (REDIS_TLS) to a server whose CA the deployment trusts, and refuses a server another CA signed', async () => {
    const answers = await throughTrustingProcess([
      { url: `rediss://127.0.0.1:${ports.trusted}` },
      { url: `redis://127.0.0.1:${ports.trusted}`, tls: true },
      { url: `rediss://127.0.0.1:${ports.foreign}` },
    ]);
    expect(answers.slice(0, 2)).toEqual(['OK over tls over tls!', 'OK over tls over tls!']);
    // The certificate is verified: the other CA's is refused, saying why.
    expect(answers[2]).toMatch(/^Error: Could not connect to Redis: .*(self.signed|unable to)/i);
  });

  /** The Cluster and the Sentinels as a deployment names them, with REDIS_TLS. */
  const clusterAndSentinels = () => [
    { mode: 'cluster', nodes: cluster?.nodes, password: PASSWORD, tls: true },
    {
      mode: 'sentinel',
      sentinels: sentinel?.sentinels,
      masterName: sentinel?.masterName,
      password: PASSWORD,
      tls: true,
    },
  ];

  it('connects with tls (REDIS_TLS) to a Cluster and through Sentinels whose CA the deployment trusts: writes, reads and Lua scripts work', async () => {
    const answers = await throughTrustingProcess(clusterAndSentinels());
    expect(answers).toEqual(['OK over tls over tls!', 'OK over tls over tls!']);
  });

  it('refuses a Cluster and Sentinels whose certificates a CA the deployment does not trust signed, saying why', async () => {
    // A deployment that trusts CA `b` only: connecting fails with an error, it does not hang.
    const answers = await throughTrustingProcess(clusterAndSentinels(), 'b');
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      expect(answer).toMatch(/^Error: Could not connect to Redis: .*(self.signed|unable to)/i);
    }
  });
});
