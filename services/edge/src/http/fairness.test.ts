import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testkit';
import { PLATFORM_AUTHENTICATION_LIMITS } from '../auth/platform-authentication-limits.js';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';

// The edge under overload and abuse, through real sockets: a flood from one address, slow
// bodies and guessed secrets leave a platform whose key is right answered. Every loop is
// bounded in count and every wait is for an event; the assertions are shares of outcomes.

const ISSUER = 'https://id.example.test';
const CAPACITY = 10;
const PLATFORM_ADDRESS = '203.0.113.10';
const ATTACKER_ADDRESS = '203.0.113.66';
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const PLATFORM_KEY = basic('gwc_backend', 'gws_backend_secret');

const opened: TestEdge[] = [];
afterEach(async () => {
  for (const edge of opened.splice(0)) await edge.close();
});

async function edgeWith(bodyDeadlineMs?: number): Promise<TestEdge> {
  const edge = await startTestEdge(
    {
      IDENTITY_ISSUER: ISSUER,
      OVERLOAD_MAX_IN_FLIGHT: String(CAPACITY),
      // The tests play several clients from 127.0.0.1, each naming its address.
      TRUSTED_PROXIES: '127.0.0.1',
    },
    {
      platformAuthenticationLimits: PLATFORM_AUTHENTICATION_LIMITS,
      ...(bodyDeadlineMs === undefined ? {} : { bodyDeadlineMs }),
    },
  );
  opened.push(edge);
  edge.registry.platformCredentials.set('gwc_backend', {
    clientSecret: 'gws_backend_secret',
    kind: 'backend',
    platformKey: 'SHOP',
    platformActive: true,
  });
  return edge;
}

function introspect(edge: TestEdge, authorization: string, address: string): Promise<Response> {
  return fetch(`${edge.url}/v1/auth/introspect`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ token: 'gst_x' }),
  });
}

/** The platform's introspections, one after another: how many of `count` answered 200. */
async function platformIntrospections(edge: TestEdge, count: number): Promise<number> {
  let answered = 0;
  for (let i = 0; i < count; i += 1) {
    const answer = await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS);
    await answer.arrayBuffer();
    if (answer.status === 200) answered += 1;
  }
  return answered;
}

describe('fair admission under overload', () => {
  it('answers a platform 200 while one address floods invalid credentials at twice the capacity', async () => {
    const edge = await edgeWith();
    let release: () => void = () => undefined;
    // The registry takes as long as the test likes to refuse a guess: a flood holds its slots.
    edge.registry.refusalsWaitFor = new Promise<void>((resolve) => (release = resolve));
    const statuses: number[] = [];
    let refusal: { headers: Headers; body: unknown } | undefined;
    const floodWorker = async (worker: number) => {
      for (let i = 0; i < 25; i += 1) {
        const guess = basic('gwc_guess', `gws_${worker}_${i}`);
        const answer = await introspect(edge, guess, ATTACKER_ADDRESS);
        const body: unknown = await answer.json();
        if (answer.status === 503) refusal ??= { headers: answer.headers, body };
        statuses.push(answer.status);
      }
    };
    const flood = Promise.all(Array.from({ length: 2 * CAPACITY }, (_, i) => floodWorker(i)));
    // The flood fills every slot first.
    await waitFor(
      async () => edge.registry.requestsOf('verifyPlatformCredential').length >= CAPACITY,
      { timeoutMs: 10_000, intervalMs: 10, what: 'the flood in every slot' },
    );

    const total = 40;
    const answered = await platformIntrospections(edge, total);
    release();
    await flood;

    expect(answered / total).toBeGreaterThanOrEqual(0.9);
    // The flood was refused beyond its share (503); those admitted were answered 401 once
    // the registry answered, and with ten failures the address met its back-off (429).
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    expect(statuses.every((status) => [401, 429, 503].includes(status))).toBe(true);
    // A refusal is the spec's error body with Retry-After, and carries the headers of every
    // /v1/auth answer: no caching, no referrer, nosniff and a request id.
    expect(refusal?.body).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The gateway is at capacity; retry shortly.',
    });
    expect(Object.fromEntries(refusal?.headers ?? [])).toMatchObject({
      'retry-after': '1',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-request-id': expect.stringMatching(/^[\w-]{8,}$/),
    });
  });

  it('answers a platform 200 while 100 bodies do not arrive, and those get 408 at their deadline', async () => {
    const edge = await edgeWith(2000);
    const port = Number(new URL(edge.url).port);
    const slow = await Promise.all(Array.from({ length: 100 }, () => openSlowBody(port)));

    const total = 40;
    const answered = await platformIntrospections(edge, total);
    const answers = await Promise.all(slow.map((socket) => wholeAnswerOf(socket)));

    expect(answered / total).toBeGreaterThanOrEqual(0.9);
    expect(answers.filter((head) => /^HTTP\/1\.1 408 /.test(head)).length).toBe(100);
  });
});

describe('brute force of a platform secret', () => {
  it('refuses repeated wrong secrets with 429 and a growing Retry-After; the right key from another address still works', async () => {
    const edge = await edgeWith();
    const guess = (i: number) => basic('gwc_backend', `gws_guess_${i}`);
    // Ten failures (PLATFORM_AUTHENTICATION_LIMITS) are answered 401 like any wrong secret.
    for (let i = 0; i < 10; i += 1) {
      expect((await introspect(edge, guess(i), ATTACKER_ADDRESS)).status).toBe(401);
    }
    const verified = edge.registry.requestsOf('verifyPlatformCredential').length;
    const retryAfter: number[] = [];
    for (let i = 10; i < 14; i += 1) {
      const refused = await introspect(edge, guess(i), ATTACKER_ADDRESS);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        code: 'RATE_LIMITED',
        message: 'Too many requests; try again later.',
      });
      retryAfter.push(Number(refused.headers.get('retry-after')));
    }
    // Each further attempt doubles the back-off; none of them reached the registry.
    expect(retryAfter).toEqual([2, 4, 8, 16]);
    expect(edge.registry.requestsOf('verifyPlatformCredential')).toHaveLength(verified);

    // The platform's own backend, which does not fail, goes on with the right key.
    expect((await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS)).status).toBe(200);
    // Its success resets nothing of the attacker's: even the right key waits there.
    expect((await introspect(edge, PLATFORM_KEY, ATTACKER_ADDRESS)).status).toBe(429);
    // An address that guessed once at a client id under attack gets no second try.
    const other = '203.0.113.77';
    expect((await introspect(edge, guess(99), other)).status).toBe(401);
    expect((await introspect(edge, guess(100), other)).status).toBe(429);
  });
});

/** A connection that sent a request's head announcing 100 bytes of body, then nothing. */
async function openSlowBody(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  await new Promise<void>((resolve, reject) =>
    socket.write(
      'POST /v1/auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: ${PLATFORM_KEY}\r\nContent-Length: 100\r\n\r\n`,
      (error) => (error ? reject(error) : resolve()),
    ),
  );
  return socket;
}

/** The head of the one answer a socket gets before the server closes it. */
function wholeAnswerOf(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
