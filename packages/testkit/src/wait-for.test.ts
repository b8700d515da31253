import { describe, it, expect } from '@jest/globals';
import { createServer } from 'node:net';
import { waitFor } from './wait-for.js';
import { unusedLocalPort } from './unused-local-port.js';

describe('waitFor', () => {
  it('resolves once the check turns true', async () => {
    let calls = 0;
    await waitFor(async () => ++calls >= 3, {
      timeoutMs: 2_000,
      intervalMs: 5,
      what: 'three calls',
    });
    expect(calls).toBe(3);
  });

  it('names what it waited for when it times out, with the last error as cause', async () => {
    const failure = waitFor(
      async () => {
        throw new Error('not ready');
      },
      { timeoutMs: 150, intervalMs: 20, what: 'the widget service' },
    );
    await expect(failure).rejects.toThrow('waiting for the widget service');
    await expect(failure).rejects.toMatchObject({ cause: { message: 'not ready' } });
  });
});

describe('unusedLocalPort', () => {
  it('returns a port that can then be listened on', async () => {
    const port = await unusedLocalPort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
