import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { createLoadShedder } from './load-shedding.js';

/** Keeps the event loop busy for `ms` (the process is then CPU-saturated). */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** Lets the shedder's overdue utilisation sample run. */
async function nextSample(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 110));
}

// Saturates the event loop: the next utilisation sample covers 1.5 s of work and at most
// 100 ms of idle time, so it sees more than 90%.
async function saturate(): Promise<void> {
  busyFor(1500);
  // The overdue sample runs in this timers phase, before this zero timeout.
  await new Promise((resolve) => setTimeout(resolve, 0));
}

// Stands in for a ServerResponse: the shedder only listens for `finish` and `close`.
const response = () => new EventEmitter() as unknown as ServerResponse;

describe('createLoadShedder (issue 8, S5)', () => {
  it('admits any number of requests while the process is not saturated', async () => {
    const shedder = createLoadShedder({ maxInFlight: 2 });
    await nextSample();
    await nextSample();
    for (let i = 0; i < 5; i += 1) expect(shedder.admit(response())).toBe(true);
    expect(shedder.inFlight).toBe(5);
    shedder.close();
  });

  it('refuses beyond maxInFlight while saturated, and admits again as requests finish', async () => {
    const shedder = createLoadShedder({ maxInFlight: 2 });
    const first = response();
    const second = response();
    expect(shedder.admit(first)).toBe(true);
    expect(shedder.admit(second)).toBe(true);
    await saturate();
    expect(shedder.admit(response())).toBe(false);
    first.emit('finish');
    first.emit('close'); // counted once
    expect(shedder.inFlight).toBe(1);
    expect(shedder.admit(response())).toBe(true);
    expect(shedder.admit(response())).toBe(false);
    second.emit('close'); // a dropped connection releases too
    expect(shedder.inFlight).toBe(1);
    shedder.close();
  });

  it('never refuses with maxInFlight 0', async () => {
    const shedder = createLoadShedder({ maxInFlight: 0 });
    await saturate();
    for (let i = 0; i < 3; i += 1) expect(shedder.admit(response())).toBe(true);
    shedder.close();
  });
});

describe('the edge when saturated (issue 8, S5)', () => {
  let edge: TestEdge;

  beforeAll(async () => {
    edge = await startTestEdge({
      IDENTITY_ISSUER: 'https://id.example.test',
      OVERLOAD_MAX_IN_FLIGHT: '1',
    });
  });

  afterAll(async () => {
    await edge.close();
  });

  it('answers new /v1 requests 503 with the error body and Retry-After: 1, but not health', async () => {
    // One request in flight: its credentials pass, its body never completes.
    edge.registry.platformCredentials.set('gwc_backend', {
      clientSecret: 'gws_backend_secret',
      kind: 'backend',
      platformKey: 'SHOP',
      platformActive: true,
    });
    const authorization = `Basic ${Buffer.from('gwc_backend:gws_backend_secret').toString('base64')}`;
    const { port } = new URL(edge.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /v1/auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: ${authorization}\r\nContent-Length: 100\r\n\r\n{"token":`,
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await saturate();
      const shed = await fetch(`${edge.url}/v1/auth/introspect`, { method: 'POST' });
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(shed.headers.get('cache-control')).toBe('no-store');
      expect(await shed.json()).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'The gateway is at capacity; retry shortly.',
      });
      expect(edge.authFlow.calls).toEqual([]);
      await saturate();
      expect((await fetch(`${edge.url}/health/live`)).status).toBe(200);
    } finally {
      socket.destroy();
    }
    await nextSample();
    await nextSample();
    const after = await fetch(`${edge.url}/v1/auth/introspect`, { method: 'POST' });
    expect(after.status).toBe(401);
  });
});
