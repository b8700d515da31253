import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis, type RedisClient, type RedisEndpoint } from '@gateway/db';
import {
  createTestRedis,
  startRedisCluster,
  startRedisSentinel,
  startTcpProxy,
  type TcpProxy,
  type TestRedis,
} from '@gateway/testkit';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { createMemoryRateLimitStore, createRedisRateLimitStore } from './rate-limit-store.js';

// The edge's rate limits (429 with the
// error body and Retry-After, per IP on start/callback, per presented credential and per IP
// on exchange/introspect, shared through Redis), security headers and trusted proxies.

const ISSUER = 'http://127.0.0.1:1/api/auth/env/PROD';
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

let testRedis: TestRedis;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  testRedis = await createTestRedis();
});
afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
  await testRedis.cleanup();
});

async function edgeWith(env: Record<string, string>, redis?: RedisClient): Promise<TestEdge> {
  const edge = await startTestEdge(
    { IDENTITY_ISSUER: ISSUER, ...env },
    redis === undefined ? {} : { rateLimitStore: createRedisRateLimitStore(redis) },
  );
  opened.push(edge);
  return edge;
}

async function redisConnection(port?: number): Promise<RedisClient> {
  const url = new URL(testRedis.url);
  if (port !== undefined) url.port = String(port);
  return connectionTo({ url: url.href }, testRedis.keyPrefix);
}

async function connectionTo(endpoint: RedisEndpoint, keyPrefix: string): Promise<RedisClient> {
  const redis = await connectRedis({
    ...endpoint,
    keyPrefix: `${keyPrefix}${Math.random().toString(16).slice(2)}:`,
    timeoutMs: 1000,
  });
  opened.push({ close: async () => redis.disconnect() });
  return redis;
}

/** The Redis modes the shared counters are tested on; one server is the shared test Redis. */
const redisModes: { name: string; open(): Promise<{ endpoint: RedisEndpoint }> }[] = [
  { name: 'one Redis server', open: async () => ({ endpoint: { url: testRedis.url } }) },
  {
    name: 'a Redis Cluster',
    async open() {
      const cluster = await startRedisCluster({ password: 'rate-limit-password' });
      opened.push({ close: () => cluster.stop() });
      return { endpoint: cluster.connection };
    },
  },
  {
    name: 'Redis Sentinel',
    async open() {
      const setup = await startRedisSentinel({ password: 'rate-limit-password' });
      opened.push({ close: () => setup.stop() });
      return { endpoint: setup.connection };
    },
  },
];

const start = (edge: TestEdge, headers: Record<string, string> = {}) =>
  fetch(`${edge.url}/v1/auth/start?platformKey=SHOP&returnTo=%2F`, {
    redirect: 'manual',
    headers,
  });

describe('rate limits', () => {
  it('answers 429 RATE_LIMITED with Retry-After once an address exceeds the browser limit on start and callback', async () => {
    const edge = await edgeWith({
      RATE_LIMIT_BROWSER_PER_IP: '3',
      RATE_LIMIT_WINDOW_SECONDS: '30',
    });
    for (let i = 0; i < 2; i += 1) expect((await start(edge)).status).not.toBe(429);
    // The callback counts against the same address.
    const callback = await fetch(`${edge.url}/v1/auth/callback?code=c&state=s`, {
      redirect: 'manual',
    });
    expect(callback.status).not.toBe(429);
    const limited = await start(edge);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      code: 'RATE_LIMITED',
      message: 'Too many requests; try again later.',
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(limited.headers.get('cache-control')).toBe('no-store');
  });

  it('counts exchange per presented credential: a wrong secret for the same client id never spends the real key', async () => {
    const edge = await edgeWith({ RATE_LIMIT_EXCHANGE_PER_CLIENT: '2' });
    const exchange = (authorization: string) =>
      fetch(`${edge.url}/v1/auth/exchange`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'handoff_x' }),
      });
    const forged = basic('gwc_shop', 'guessed');
    for (let i = 0; i < 2; i += 1) expect((await exchange(forged)).status).not.toBe(429);
    expect((await exchange(forged)).status).toBe(429);
    const real = basic('gwc_shop', 'the-real-secret');
    expect((await exchange(real)).status).not.toBe(429);
  });

  it.each(redisModes)(
    'shares the counters of every edge instance through $name, each key of a request counted',
    async (mode) => {
      const { endpoint } = await mode.open();
      const redis = await connectionTo(endpoint, 't:');
      // Introspect counts two keys: the presented credential and the client address.
      const env = { RATE_LIMIT_INTROSPECT_PER_CLIENT: '3', RATE_LIMIT_SERVER_PER_IP: '5' };
      const first = await edgeWith(env, redis);
      const second = await edgeWith(env, redis);
      const introspect = (edge: TestEdge, client = 'gwc_a') =>
        fetch(`${edge.url}/v1/auth/introspect`, {
          method: 'POST',
          headers: { authorization: basic(client, 's'), 'content-type': 'application/json' },
          body: JSON.stringify({ token: 't' }),
        });
      expect((await introspect(first)).status).not.toBe(429);
      expect((await introspect(second)).status).not.toBe(429);
      expect((await introspect(first)).status).not.toBe(429);
      const limited = await introspect(second);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^[0-9]+$/);
      // The address counter holds every request so far (4): a fifth passes for another
      // credential, the sixth is over the per-address limit.
      expect((await introspect(first, 'gwc_b')).status).not.toBe(429);
      expect((await introspect(first, 'gwc_c')).status).toBe(429);
    },
  );

  it('lets requests through when the counter store cannot be reached (fails open within its deadline)', async () => {
    const url = new URL(testRedis.url);
    const proxy: TcpProxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    opened.push(proxy);
    const redis = await redisConnection(proxy.port);
    const edge = await edgeWith({ RATE_LIMIT_BROWSER_PER_IP: '1' }, redis);
    expect((await start(edge)).status).not.toBe(429);
    expect((await start(edge)).status).toBe(429);
    await proxy.cut();
    const began = Date.now();
    expect((await start(edge)).status).not.toBe(429);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('believes X-Forwarded-For only from a configured proxy', async () => {
    const trusting = await edgeWith({
      RATE_LIMIT_BROWSER_PER_IP: '1',
      TRUSTED_PROXIES: '127.0.0.1,::1',
    });
    expect((await start(trusting, { 'x-forwarded-for': '203.0.113.1' })).status).not.toBe(429);
    // Another client behind the trusted proxy has its own budget.
    expect((await start(trusting, { 'x-forwarded-for': '203.0.113.2' })).status).not.toBe(429);
    expect((await start(trusting, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);

    const direct = await edgeWith({ RATE_LIMIT_BROWSER_PER_IP: '1' });
    expect((await start(direct, { 'x-forwarded-for': '203.0.113.1' })).status).not.toBe(429);
    // Untrusted: a forged header does not buy a new budget.
    expect((await start(direct, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(429);
  });

  it('keeps counters per process without Redis, and ends them with the window', async () => {
    let now = 1_000_000;
    const store = createMemoryRateLimitStore(() => now);
    expect(await store.hit(['k'], 60_000)).toEqual([{ count: 1, resetMs: 60_000 }]);
    now += 59_000;
    expect(await store.hit(['k'], 60_000)).toEqual([{ count: 2, resetMs: 1_000 }]);
    now += 1_000;
    expect(await store.hit(['k'], 60_000)).toEqual([{ count: 1, resetMs: 60_000 }]);
  });
});

describe('security headers', () => {
  it('sends nosniff everywhere, no-store and no-referrer on /v1/auth, HSTS only in production', async () => {
    const development = await edgeWith({});
    const production = await edgeWith({ NODE_ENV: 'production' });
    const health = await fetch(`${development.url}/health/live`);
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    expect(health.headers.get('strict-transport-security')).toBeNull();
    const auth = await start(development);
    expect(auth.headers.get('cache-control')).toBe('no-store');
    expect(auth.headers.get('referrer-policy')).toBe('no-referrer');
    expect(auth.headers.get('x-content-type-options')).toBe('nosniff');
    const secure = await fetch(`${production.url}/health/live`);
    expect(secure.headers.get('strict-transport-security')).toBe(
      'max-age=31536000; includeSubDomains',
    );
  });
});
