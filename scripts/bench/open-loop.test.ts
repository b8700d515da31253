import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runOpenLoop } from './open-loop.js';

// S5's open-loop generator against a local server. Only behaviour is asserted (what was sent,
// answered and counted), never a rate or a latency: the machine may be busy.
describe('runOpenLoop', () => {
  let server: Server;
  let url = '';
  const REFUSAL = '{"code":"SERVICE_UNAVAILABLE","message":"busy"}';
  beforeAll(async () => {
    // /slow answers after 20 ms; /busy refuses with Retry-After, /bare without it.
    server = createServer((req, res) => {
      const refused = req.url === '/busy' || req.url === '/bare';
      const body = refused ? REFUSAL : '{"active":true}';
      const answer = () => {
        res.writeHead(refused ? 503 : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(req.url === '/busy' ? { 'retry-after': '1' } : {}),
        });
        res.end(body);
      };
      if (req.url === '/slow') setTimeout(answer, 20);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const offer = (rate: number, connections: number, paths: string[]) =>
    runOpenLoop({
      url,
      ratePerSecond: rate,
      durationSeconds: 0.5,
      requests: paths.map((path) => ({ method: 'GET', path })),
      connections,
      timeoutMs: 30_000,
      expectedStatuses: [200, 503],
    });

  it('offers what the schedule calls for and, with the pool busy, sends the rest as connections free', async () => {
    // Two connections answered after 20 ms serve far fewer than the 200 requests offered.
    const result = await offer(400, 2, ['/slow']);
    expect(result).toMatchObject({
      offered: 200,
      answered: 200,
      errors: 0,
      statusCounts: { '200': 200 },
    });
    // Waiting for a connection counts from the schedule, not from the write.
    expect(result.p99FromScheduleMs).toBeGreaterThan(result.p99Ms);
  });

  it('counts refusals, keeps their first body and notes those without Retry-After', async () => {
    const result = await offer(100, 4, ['/ok', '/busy', '/bare']);
    expect(result.answered).toBe(result.offered);
    expect(result.errors).toBe(0);
    expect(result.statusCounts['503']).toBeGreaterThan(0);
    expect(result.bodies).toEqual({ '503': REFUSAL });
    // /bare's refusals only.
    expect(result.withoutRetryAfter).toBeGreaterThan(0);
    expect(result.withoutRetryAfter).toBeLessThan(result.statusCounts['503'] ?? 0);
  });

  it('counts statuses it does not expect as errors', async () => {
    const result = await runOpenLoop({
      url,
      ratePerSecond: 100,
      durationSeconds: 0.2,
      requests: [{ method: 'GET', path: '/busy' }],
      connections: 2,
      timeoutMs: 30_000,
      expectedStatuses: [200],
    });
    expect(result.errors).toBe(result.offered);
  });
});
