import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { unusedLocalPort } from './unused-local-port.js';

const ephemeralStart = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
);

describe('unusedLocalPort', () => {
  it('hands out a different free port each time, below the range outgoing connections use', async () => {
    const ports = [];
    for (let count = 0; count < 20; count += 1) ports.push(await unusedLocalPort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(ephemeralStart);
    // Each can be listened on.
    for (const port of ports.slice(0, 3)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('skips a port something already listens on', async () => {
    const first = await unusedLocalPort();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(first + 1, '127.0.0.1', resolve));
    try {
      const next = await unusedLocalPort();
      expect(next).not.toBe(first + 1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
