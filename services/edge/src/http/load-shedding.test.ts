import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
import { waitFor } from '@gateway/testkit';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { createLoadShedder } from './load-shedding.js';

// Stands in for a ServerResponse: the shedder only listens for `finish` and `close`.
const response = () => new EventEmitter() as unknown as ServerResponse;
const quiet = createLogger({ service: 'test', level: 'silent' });

describe('createLoadShedder (issue 8, S5)', () => {
  it('refuses at maxInFlight and admits again as requests finish or their connections close', () => {
    const shedder = createLoadShedder({ maxInFlight: 2, production: false, logger: quiet });
    const first = response();
    const second = response();
    expect(shedder.admit(first)).toBe(true);
    expect(shedder.admit(second)).toBe(true);
    expect(shedder.admit(response())).toBe(false);
    first.emit('finish');
    first.emit('close'); // counted once
    expect(shedder.inFlight).toBe(1);
    expect(shedder.admit(response())).toBe(true);
    expect(shedder.admit(response())).toBe(false);
    second.emit('close'); // a dropped connection releases too
    expect(shedder.inFlight).toBe(1);
  });

  it('never refuses with maxInFlight 0', () => {
    const shedder = createLoadShedder({ maxInFlight: 0, production: false, logger: quiet });
    for (let i = 0; i < 300; i += 1) expect(shedder.admit(response())).toBe(true);
  });
});

describe('the edge at its bound of requests in flight (issue 8, S5)', () => {
  let edge: TestEdge;
  const log = createMemoryLog();

  beforeAll(async () => {
    edge = await startTestEdge(
      { IDENTITY_ISSUER: 'https://id.example.test', OVERLOAD_MAX_IN_FLIGHT: '1' },
      { logger: createLogger({ service: 'test', level: 'info', destination: log.destination }) },
    );
    edge.registry.platformCredentials.set('gwc_backend', {
      clientSecret: 'gws_backend_secret',
      kind: 'backend',
      platformKey: 'SHOP',
      platformActive: true,
    });
  });

  afterAll(async () => {
    await edge.close();
  });

  const authorization = `Basic ${Buffer.from('gwc_backend:gws_backend_secret').toString('base64')}`;

  it('answers start, exchange and introspect 503 with the error body and Retry-After: 1 at once; other routes and health go on', async () => {
    // One introspection in flight: its credentials pass, its body never completes.
    const { port } = new URL(edge.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    try {
      socket.write(
        'POST /v1/auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Authorization: ${authorization}\r\nContent-Length: 100\r\n\r\n{"token":`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const [method, path] of [
        ['POST', '/v1/auth/introspect'],
        ['POST', '/v1/auth/exchange'],
        ['GET', '/v1/auth/start?platformKey=SHOP&returnTo=%2F'],
      ] as const) {
        const shed = await fetch(`${edge.url}${path}`, { method });
        expect({ path, status: shed.status }).toEqual({ path, status: 503 });
        expect(shed.headers.get('retry-after')).toBe('1');
        expect(shed.headers.get('cache-control')).toBe('no-store');
        expect(shed.headers.get('referrer-policy')).toBe('no-referrer');
        expect(shed.headers.get('x-content-type-options')).toBe('nosniff');
        expect(shed.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(shed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
        expect(await shed.json()).toEqual({
          code: 'SERVICE_UNAVAILABLE',
          message: 'The gateway is at capacity; retry shortly.',
        });
      }
      expect(edge.authFlow.calls).toEqual([]);
      // A refusal on purpose is no failure, and is not logged one by one: one summary line
      // per second counts them by operation.
      expect(log.raw.join('')).not.toContain('request failed');
      expect(log.lines().filter((line) => line.status === 503)).toEqual([]);
      await waitFor(async () => log.lines().some((line) => line.shed !== undefined), {
        timeoutMs: 3000,
        intervalMs: 50,
        what: 'the summary of refusals',
      });
      expect(log.lines().filter((line) => line.shed !== undefined)).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: 'requests refused at the bound of requests in flight',
          maxInFlight: 1,
          shed: {
            introspectGatewaySession: 1,
            exchangeAuthenticationHandoff: 1,
            startAuthentication: 1,
          },
        }),
      ]);
      // The callback waits on the identity provider, not on this process: never shed.
      const callback = await fetch(`${edge.url}/v1/auth/callback?code=c&state=s`, {
        redirect: 'manual',
      });
      expect(callback.status).toBe(302);
      expect((await fetch(`${edge.url}/health/live`)).status).toBe(200);
    } finally {
      socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await fetch(`${edge.url}/v1/auth/introspect`, { method: 'POST' });
    expect(after.status).toBe(401);
  });
});
