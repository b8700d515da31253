import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runOpenLoop } from './open-loop.js';

// S5's open-loop generator against a local server slower than the rate it is offered: the
// requests that find no idle connection wait for one, oldest first, and are all sent and
// answered once connections free up; their wait counts in the latency from the schedule.
describe('runOpenLoop', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    // Answers after `ms` (default 20), or at the time `until` (epoch ms), at once if it passed.
    server = createServer((req, res) => {
      const body = req.url === '/busy' ? '{"code":"SERVICE_UNAVAILABLE"}' : '{"active":true}';
      const answer = () => {
        res.writeHead(req.url === '/busy' ? 503 : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      };
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const until = query.get('until');
      const delayMs = until === null ? Number(query.get('ms') ?? 20) : Number(until) - Date.now();
      if (delayMs <= 0) answer();
      else setTimeout(answer, delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  /** `paths` offered in turn at `rate` a second for `seconds`; only 200 is expected. */
  const offer = (rate: number, seconds: number, connections: number, paths: string[]) =>
    runOpenLoop({
      url,
      ratePerSecond: rate,
      durationSeconds: seconds,
      requests: paths.map((path) => ({ method: 'GET', path })),
      connections,
      timeoutMs: 5_000,
      expectedStatuses: [200],
    });

  it('sends every request on schedule or, with the pool busy, as soon as a connection frees', async () => {
    // 2 connections answered after 20 ms serve about 100 requests a second; 400 are offered.
    const result = await offer(400, 0.5, 2, ['/ok']);
    expect(result.offered).toBe(200);
    expect(result.sent).toBe(200);
    expect(result.answered).toBe(200);
    expect(result.errors).toBe(0);
    expect(result.statusCounts).toEqual({ '200': 200 });
    expect(result.backlogMax).toBeGreaterThan(100);
    // The last of the backlog waited about 200 x 20 ms / 2 connections for its turn.
    expect(result.p99FromScheduleMs).toBeGreaterThan(1_000);
    expect(result.p99Ms).toBeLessThan(500);
  });

  it('drains a backlog of thousands (it is read from a moving head, compacted as it goes)', async () => {
    // 5,000 requests offered in half a second to one connection, whose first request is held
    // until a second after the offering ends: all of them wait, then drain as fast as the
    // server answers (at once), so a busy machine slows the drain but cannot shrink the
    // backlog. The warm-up takes the first path, the held request the second.
    const until = Date.now() + 1_500;
    const result = await offer(10_000, 0.5, 1, ['/ok?ms=0', `/ok?until=${until}`]);
    expect(result.offered).toBe(5_000);
    expect(result.answered).toBe(5_000);
    expect(result.errors).toBe(0);
    expect(result.backlogMax).toBeGreaterThan(4_096);
  }, 30_000);

  it('counts answers with other statuses as errors and keeps their first body', async () => {
    const result = await offer(100, 0.2, 4, ['/ok', '/busy']);
    expect(result.answered).toBe(result.offered);
    expect(result.statusCounts['503']).toBeGreaterThan(0);
    expect(result.errors).toBe(result.statusCounts['503']);
    expect(result.bodies['503']).toBe('{"code":"SERVICE_UNAVAILABLE"}');
  });

  it('reports its own longest stall, whose requests go out late and count as slow', async () => {
    // The thread is blocked for 150 ms a quarter of a second into a 0.6 s run at 200 a
    // second: the 30 requests due meanwhile are sent when it ends, each late by up to 150 ms.
    const blocked = setTimeout(() => {
      const until = performance.now() + 150;
      while (performance.now() < until);
    }, 250);
    const result = await offer(200, 0.6, 4, ['/ok?ms=0']);
    clearTimeout(blocked);
    expect(result.answered).toBe(result.offered);
    expect(result.errors).toBe(0);
    expect(result.generatorStallMaxMs).toBeGreaterThanOrEqual(150);
    expect(result.p99FromScheduleMs).toBeGreaterThanOrEqual(100);
  });
});
