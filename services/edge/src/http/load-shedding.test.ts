import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
import { waitFor } from '@gateway/testkit';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { createLoadShedder } from './load-shedding.js';

// Stands in for a ServerResponse: the shedder only listens for `finish` and `close`.
const response = () => new EventEmitter() as unknown as ServerResponse;
const quiet = createLogger({ service: 'test', level: 'silent' });
const ADDRESS = '192.0.2.1';

describe('createLoadShedder', () => {
  it('refuses at maxInFlight and admits again as requests finish or their connections close', () => {
    const shedder = createLoadShedder({ maxInFlight: 2, logger: quiet });
    const first = response();
    const second = response();
    expect(shedder.admit(first, 'key', ADDRESS)).toBe(true);
    expect(shedder.admit(second, 'key', ADDRESS)).toBe(true);
    expect(shedder.admit(response(), 'key', ADDRESS)).toBe(false);
    first.emit('finish');
    first.emit('close'); // counted once
    expect(shedder.inFlight).toBe(1);
    expect(shedder.admit(response(), 'key', ADDRESS)).toBe(true);
    expect(shedder.admit(response(), 'key', ADDRESS)).toBe(false);
    second.emit('close'); // a dropped connection releases too
    expect(shedder.inFlight).toBe(1);
  });

  it('never refuses with maxInFlight 0', () => {
    const shedder = createLoadShedder({ maxInFlight: 0, logger: quiet });
    for (let i = 0; i < 300; i += 1) expect(shedder.admit(response(), 'key', ADDRESS)).toBe(true);
  });

  it('lets a client alone fill the bound, and keeps a share beyond it for the others', () => {
    const shedder = createLoadShedder({ maxInFlight: 8, logger: quiet });
    const flood = Array.from({ length: 8 }, () => response());
    for (const held of flood) expect(shedder.admit(held, undefined, 'flooder')).toBe(true);
    expect(shedder.admit(response(), undefined, 'flooder')).toBe(false);
    // A share (a quarter of 8) for each other address, up to a share beyond the bound.
    expect(shedder.admit(response(), 'platform-a', 'a')).toBe(true);
    expect(shedder.admit(response(), 'platform-a', 'a')).toBe(true);
    expect(shedder.admit(response(), 'platform-a', 'a')).toBe(false);
    expect(shedder.admit(response(), 'platform-b', 'b')).toBe(false);
    expect(shedder.inFlight).toBe(10);
    // Not alone any more: the flooder gets a slot again only below the bound minus a share.
    for (const held of flood.slice(0, 3)) held.emit('finish');
    expect(shedder.admit(response(), undefined, 'flooder')).toBe(false);
    flood[3]?.emit('finish');
    flood[4]?.emit('finish');
    expect(shedder.admit(response(), undefined, 'flooder')).toBe(true);
  });

  it('bounds one credential from many addresses like one address', () => {
    const shedder = createLoadShedder({ maxInFlight: 4, logger: quiet });
    // Over its share (1 of 4) from the second address on: only below the bound minus a share.
    for (const address of ['a', 'b', 'c']) {
      expect(shedder.admit(response(), 'guessed', address)).toBe(true);
    }
    expect(shedder.admit(response(), 'guessed', 'd')).toBe(false);
    expect(shedder.admit(response(), 'platform', 'e')).toBe(true);
  });
});

const BODY_DEADLINE_MS = 300;

describe('the edge at its bound of requests in flight', () => {
  let edge: TestEdge;
  const log = createMemoryLog();
  const authorization = `Basic ${Buffer.from('gwc_backend:gws_backend_secret').toString('base64')}`;
  const introspect = (headers: Record<string, string> = {}) =>
    fetch(`${edge.url}/v1/auth/introspect`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ token: 'gst_x' }),
    });

  beforeAll(async () => {
    edge = await startTestEdge(
      {
        IDENTITY_ISSUER: 'https://id.example.test',
        OVERLOAD_MAX_IN_FLIGHT: '1',
        CORS_ORIGINS: 'https://app.example.test',
      },
      {
        logger: createLogger({ service: 'test', level: 'info', destination: log.destination }),
        bodyDeadlineMs: BODY_DEADLINE_MS,
      },
    );
  });

  beforeEach(() => {
    edge.authFlow.reset();
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

  /** One introspection held in flight (its service call waits) until `release`. */
  async function holdOneInFlight(): Promise<{ release: () => Promise<void> }> {
    let open: () => void = () => undefined;
    edge.authFlow.introspectionsWaitFor = new Promise<void>((resolve) => (open = resolve));
    const held = introspect();
    await waitFor(async () => edge.authFlow.requestsOf('introspectSession').length === 1, {
      timeoutMs: 3000,
      intervalMs: 10,
      what: 'the held introspection',
    });
    edge.authFlow.introspectionsWaitFor = undefined;
    return {
      release: async () => {
        open();
        expect((await held).status).toBe(200);
      },
    };
  }

  it('answers start, exchange and introspect 503 with the error body and Retry-After: 1 at once; other routes and health go on', async () => {
    const held = await holdOneInFlight();
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
    expect(edge.authFlow.calls.map((call) => call.method)).toEqual(['introspectSession']);
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
    await held.release();
    expect((await introspect()).status).toBe(200);
  });

  it('sheds a request that carries an Origin like any other', async () => {
    const held = await holdOneInFlight();
    const shed = await introspect({ origin: 'https://app.example.test' });
    expect(shed.status).toBe(503);
    expect(shed.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(await shed.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await held.release();
    expect((await introspect({ origin: 'https://app.example.test' })).status).toBe(200);
  });

  it('holds no slot for a body that does not arrive, and answers it 408 after the deadline', async () => {
    const { port } = new URL(edge.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answer = readWholeAnswer(socket);
    socket.write(
      'POST /v1/auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: ${authorization}\r\nContent-Length: 100\r\n\r\n`,
    );
    // The slow request's headers are in; a normal request meanwhile is admitted.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await introspect()).status).toBe(200);
    const slow = await answer;
    expect(slow.head).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.head).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(slow.body)).toEqual({
      code: 'REQUEST_TIMEOUT',
      message: 'The request body did not arrive in time.',
    });
    socket.destroy();
  });
});

/** The bytes of one answer on a raw socket, read until the server closes the connection. */
function readWholeAnswer(socket: Socket): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, headEnd + 2), body: text.slice(headEnd + 4) });
    });
  });
}
