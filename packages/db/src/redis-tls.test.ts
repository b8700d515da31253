// connectRedis over TLS against TLS-only redis-server processes (Debian's redis-server is built
// with TLS), each with a throwaway CA and server certificate made by openssl: `rediss://` and
// REDIS_TLS (`tls: true`) connect and verify the certificate, a deployment trusts its private
// CA through NODE_EXTRA_CA_CERTS (read by Node at start, so in a child process), and a server
// whose certificate another CA signed is refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { unusedLocalPort, waitFor } from '@gateway/testkit';

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

describe('connectRedis over TLS', () => {
  let dir = '';
  const servers: ChildProcess[] = [];
  const ports = { trusted: 0, foreign: 0 };

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
    ports.trusted = await startTlsRedis('a');
    ports.foreign = await startTlsRedis('b');
  });

  afterAll(async () => {
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
   * connectRedis in a Node process that trusts CA `a` (NODE_EXTRA_CA_CERTS): a SET and GET
   * through each endpoint, or the connection's error message.
   */
  async function throughTrustingProcess(endpoints: object[]): Promise<string[]> {
    const script = `
      const { connectRedis } = await import(${JSON.stringify(connectionModule)});
      const answers = [];
      for (const endpoint of ${JSON.stringify(endpoints)}) {
        try {
          const redis = await connectRedis({ ...endpoint, timeoutMs: 5000 });
          answers.push(\`\${await redis.set('tls-key', 'over tls')} \${await redis.get('tls-key')}\`);
          redis.disconnect();
        } catch (error) {
          answers.push(String(error));
        }
      }
      console.log(JSON.stringify(answers));`;
    const { stdout } = await run(
      process.execPath,
      ['--conditions=@gateway/source', '--import', 'tsx', '--input-type=module', '-e', script],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca-a.crt') }, timeout: 60_000 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
  }

  it('connects with rediss:// and with tls (REDIS_TLS) to a server whose CA the deployment trusts, and refuses a server another CA signed', async () => {
    const answers = await throughTrustingProcess([
      { url: `rediss://127.0.0.1:${ports.trusted}` },
      { url: `redis://127.0.0.1:${ports.trusted}`, tls: true },
      { url: `rediss://127.0.0.1:${ports.foreign}` },
    ]);
    expect(answers.slice(0, 2)).toEqual(['OK over tls', 'OK over tls']);
    // The certificate is verified: the other CA's is refused, saying why.
    expect(answers[2]).toMatch(/^Error: Could not connect to Redis: .*(self.signed|unable to)/i);
  });
});
