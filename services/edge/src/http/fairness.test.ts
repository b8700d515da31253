import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testkit';
import { createLogger, type Logger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
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

async function edgeWith(bodyDeadlineMs?: number, logger?: Logger): Promise<TestEdge> {
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
      ...(logger === undefined ? {} : { logger }),
    },
  );
  opened.push(edge);
  edge.registry.platformCredentials.set('gwc_backend', {
    clientSecret: 'gws_backend_secret',
    kind: 'backend',
    platformKey: 'SHOP',
    platformActive: true,
  });
  edge.registry.platformCredentials.set('gwc_other', {
    clientSecret: 'gws_other_secret',
    kind: 'backend',
    platformKey: 'OTHER',
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
        // Made-up client ids, each a registry call of its own that the registry holds.
        const guess = basic(`gwc_guess_${worker}_${i}`, 'gws_guess');
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

const OTHER_KEY = basic('gwc_other', 'gws_other_secret');
const verifications = (edge: TestEdge) => edge.registry.requestsOf('verifyPlatformCredential');

describe('failed platform authentications (docs/operations.md, the back-off)', () => {
  it('answers the first wrong secrets 401 and the rest of the window 429, and the right key 200 from the same address', async () => {
    const edge = await edgeWith();
    const guess = (i: number) => basic('gwc_backend', `gws_guess_${i}`);
    // Ten failures (PLATFORM_AUTHENTICATION_LIMITS) are answered 401 like any wrong secret.
    for (let i = 0; i < 10; i += 1) {
      expect((await introspect(edge, guess(i), ATTACKER_ADDRESS)).status).toBe(401);
    }
    const retryAfter: number[] = [];
    for (let i = 10; i < 50; i += 1) {
      const refused = await introspect(edge, guess(i), ATTACKER_ADDRESS);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        code: 'RATE_LIMITED',
        message: 'Too many requests; try again later.',
      });
      retryAfter.push(Number(refused.headers.get('retry-after')));
    }
    // Until the window (10 minutes) of the first failure ends, never beyond it.
    expect(Math.max(...retryAfter)).toBeLessThanOrEqual(600);
    expect(retryAfter).toEqual([...retryAfter].sort((a, b) => b - a));

    // The right key is answered at once, from the guessing address too.
    expect((await introspect(edge, PLATFORM_KEY, ATTACKER_ADDRESS)).status).toBe(200);
    expect((await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS)).status).toBe(200);
    // An address that guesses once at the client id under attack meets its back-off too.
    expect((await introspect(edge, guess(99), '203.0.113.77')).status).toBe(429);
  });

  it('answers every introspection of a platform while made-up client ids flood from its own address', async () => {
    const edge = await edgeWith();
    const statuses: number[] = [];
    const flood = async (worker: number) => {
      for (let i = 0; i < 20; i += 1) {
        const answer = await introspect(
          edge,
          basic(`gwc_made_up_${worker}_${i}`, 'x'),
          PLATFORM_ADDRESS,
        );
        await answer.arrayBuffer();
        statuses.push(answer.status);
      }
    };
    const legitimate: number[] = [];
    const platform = async () => {
      for (let i = 0; i < 30; i += 1) {
        const answer = await introspect(edge, OTHER_KEY, PLATFORM_ADDRESS);
        await answer.arrayBuffer();
        legitimate.push(answer.status);
      }
    };
    await Promise.all([flood(0), flood(1), flood(2), platform()]);
    // Four requests in flight at most: under the bound, so every answer is the key's.
    expect(legitimate.every((status) => status === 200)).toBe(true);
    expect(statuses.every((status) => [401, 429, 503].includes(status))).toBe(true);
    // One registry call per made-up id at most, and one for the platform's own key.
    expect(verifications(edge).length).toBeLessThanOrEqual(60 + 1);
  });

  it('asks the registry once for a known client id, whatever wrong secrets follow', async () => {
    const edge = await edgeWith();
    for (let i = 0; i < 40; i += 1) {
      const answer = await introspect(
        edge,
        basic('gwc_backend', `gws_wrong_${i}`),
        ATTACKER_ADDRESS,
      );
      expect([401, 429]).toContain(answer.status);
    }
    expect((await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS)).status).toBe(200);
    // Kept 10 s (CREDENTIAL_CACHE_TTL_MS): a slow machine may need one lookup more.
    expect(verifications(edge).length).toBeLessThanOrEqual(2);
    // A change announced on the feed drops what the edge knows: the next attempt asks again.
    const before = verifications(edge).length;
    await edge.changeFeed.announce();
    expect((await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS)).status).toBe(200);
    expect(verifications(edge).length).toBe(before + 1);
  });

  it('writes no request log line per refused attempt, and one per answered request', async () => {
    const log = createMemoryLog();
    const edge = await edgeWith(
      undefined,
      createLogger({ service: 'edge', destination: log.destination, level: 'info' }),
    );
    for (let i = 0; i < 30; i += 1) {
      await (
        await introspect(edge, basic('gwc_backend', `gws_wrong_${i}`), ATTACKER_ADDRESS)
      ).arrayBuffer();
      await (
        await introspect(edge, basic(`gwc_made_up_${i}`, 'x'), ATTACKER_ADDRESS)
      ).arrayBuffer();
    }
    await (await introspect(edge, PLATFORM_KEY, PLATFORM_ADDRESS)).arrayBuffer();
    await waitFor(
      () =>
        Promise.resolve(
          log.lines().some((line) => line.msg === 'request completed' && line.status === 200),
        ),
      { timeoutMs: 10_000, intervalMs: 10, what: 'the answered request logged' },
    );
    const requestLines = log.lines().filter((line) => line.path === '/v1/auth/introspect');
    expect(requestLines.map((line) => line.status)).toEqual([200]);
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
