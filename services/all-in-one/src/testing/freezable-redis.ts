import { spawn, type ChildProcess } from 'node:child_process';
import { unusedLocalPort, waitFor } from '@gateway/testkit';
import { Redis } from 'ioredis';

// A redis-server of one test file, which the test freezes (SIGSTOP) the way a stalled Redis
// host does: commands sent meanwhile wait in its socket and run at the thaw (SIGCONT).

export type FreezableRedis = {
  port: number;
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
};

/** redis-server on a free port, without persistence, answering PING. */
export async function startFreezableRedis(): Promise<FreezableRedis> {
  const port = await unusedLocalPort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  await waitFor(() => answersPing(port), {
    timeoutMs: 30_000,
    intervalMs: 50,
    what: 'the private redis-server to answer PING',
  });
  return {
    port,
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** One attempt, then closed: no client reconnecting in the background. */
async function answersPing(port: number): Promise<boolean> {
  const client = new Redis(`redis://127.0.0.1:${port}`, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } finally {
    client.disconnect();
  }
}
