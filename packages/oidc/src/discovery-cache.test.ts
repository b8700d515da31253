import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createDiscoveryCache } from './discovery-cache.js';

// A discovery endpoint of the test's own that counts requests and can be made to fail or
// to answer late.
let server: Server;
let issuer: string;
let requests = 0;
let failing = false;
let delayMs = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests += 1;
    setTimeout(() => {
      if (failing) {
        res.writeHead(503).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, requests }));
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/idp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests = 0;
  failing = false;
  delayMs = 0;
});

describe('createDiscoveryCache', () => {
  it('fetches a document once and serves it from memory afterwards', async () => {
    const cache = createDiscoveryCache({ timeoutMs: 2_000 });
    const first = await cache.get(issuer);
    const second = await cache.get(issuer);
    expect(second).toBe(first);
    expect(requests).toBe(1);
  });

  it('shares one fetch between concurrent gets', async () => {
    delayMs = 50;
    const cache = createDiscoveryCache({ timeoutMs: 2_000 });
    const documents = await Promise.all([cache.get(issuer), cache.get(issuer), cache.get(issuer)]);
    expect(new Set(documents).size).toBe(1);
    expect(requests).toBe(1);
  });

  it('does not keep failures: the next get tries again', async () => {
    const cache = createDiscoveryCache({ timeoutMs: 2_000 });
    failing = true;
    await expect(cache.get(issuer)).rejects.toMatchObject({ code: 'IDENTITY_UNAVAILABLE' });
    failing = false;
    await expect(cache.get(issuer)).resolves.toMatchObject({ issuer });
    expect(requests).toBe(2);
  });

  it('fetches again after the TTL and after forget', async () => {
    const cache = createDiscoveryCache({ timeoutMs: 2_000, ttlMs: 40 });
    await cache.get(issuer);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await cache.get(issuer)).requests).toBe(2);
    cache.forget(issuer);
    expect((await cache.get(issuer)).requests).toBe(3);
  });

  it('does not keep a document whose fetch was running when it was forgotten', async () => {
    delayMs = 50;
    const cache = createDiscoveryCache({ timeoutMs: 2_000 });
    const running = cache.get(issuer);
    cache.forget(issuer);
    await running;
    delayMs = 0;
    await cache.get(issuer);
    expect(requests).toBe(2);
  });
});
