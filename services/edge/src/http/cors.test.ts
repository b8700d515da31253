import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { routesOf } from '@gateway/rpc';
import { RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { createLogger } from '@gateway/telemetry';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import { createFakeRegistry } from '../testing/fake-registry.js';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { createCors } from './cors.js';

// Credentialed CORS (spec 2.15, 5) over real HTTP. The allowlist is CORS_ORIGINS, the origin
// of IDENTITY_ISSUER and what the registry reports; the registry here is the recording fake
// of testing/fake-registry.ts.

const ADMIN_UI = 'https://admin.example.test';
const SHOP = 'https://shop.example.test';

let provider: TestOpenIdProvider;
let edge: TestEdge;
let token: string;

beforeAll(async () => {
  provider = await startTestOpenIdProvider();
  edge = await startTestEdge({ IDENTITY_ISSUER: provider.issuer, CORS_ORIGINS: ADMIN_UI });
  edge.registry.issuers.set(provider.issuer, {
    environmentKey: 'PROD',
    active: true,
    deployment: true,
  });
  edge.registry.corsOrigins = [SHOP];
  token = await provider.machineToken({ scope: 'platforms:admin' });
});

afterAll(async () => {
  await edge.close();
  await provider.close();
});

async function request(path: string, init: { method?: string; headers?: Record<string, string> }) {
  const response = await fetch(`${edge.url}${path}`, init);
  await response.body?.cancel();
  return response;
}

function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries(
    [...response.headers.entries()].filter(([name]) => name.startsWith('access-control-')),
  );
}

describe('an allowed origin', () => {
  it.each([
    ['CORS_ORIGINS', ADMIN_UI],
    ['the IDENTITY_ISSUER origin', () => provider.origin],
    ['a registry origin', SHOP],
  ])('is echoed exactly, with credentials (%s)', async (_source, value) => {
    const origin = typeof value === 'function' ? value() : value;
    const response = await request('/v1/platforms', {
      headers: { origin, authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({
      'access-control-allow-origin': origin,
      'access-control-allow-credentials': 'true',
    });
    expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
  });

  it('can read an error answer too (401 without credentials)', async () => {
    const response = await request('/v1/platforms', { headers: { origin: ADMIN_UI } });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe(ADMIN_UI);
  });

  it('gets a preflight answer of 204 with methods, headers and max-age', async () => {
    const response = await request('/v1/platforms/SHOP', {
      method: 'OPTIONS',
      headers: {
        origin: ADMIN_UI,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(response.status).toBe(204);
    expect(corsHeaders(response)).toEqual({
      'access-control-allow-origin': ADMIN_UI,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
      'access-control-allow-headers': 'Content-Type, Authorization',
      'access-control-max-age': '600',
    });
  });
});

describe('a disallowed origin', () => {
  it.each([
    'https://evil.example.test',
    'null',
    `${ADMIN_UI}/`,
    `${ADMIN_UI}/path`,
    'https://admin.example.test:8443',
    'http://admin.example.test',
  ])('gets no CORS headers: %s', async (origin) => {
    const response = await request('/v1/platforms', {
      headers: { origin, authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
  });

  it('gets a preflight answer without CORS headers', async () => {
    const response = await request('/v1/platforms', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example.test', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(corsHeaders(response)).toEqual({});
  });
});

describe('scope and freshness', () => {
  beforeEach(() => edge.registry.reset());

  it('never answers with a wildcard', async () => {
    for (const origin of [ADMIN_UI, SHOP, 'https://evil.example.test']) {
      const response = await request('/v1/platforms', { headers: { origin } });
      expect(response.headers.get('access-control-allow-origin')).not.toBe('*');
    }
  });

  it('leaves health and docs alone', async () => {
    for (const path of ['/health/live', '/openapi.json']) {
      const response = await request(path, { headers: { origin: ADMIN_UI } });
      expect(response.status).toBe(200);
      expect(corsHeaders(response)).toEqual({});
    }
  });

  it('reads the registry origins again right after a change made through this edge', async () => {
    const added = 'https://new-shop.example.test';
    await request('/v1/platforms', { headers: { origin: SHOP } }); // the allowlist is cached
    edge.registry.reset();
    edge.registry.corsOrigins = [SHOP, added];
    // Still cached: the registry is not asked on every request.
    const before = await request('/v1/platforms', { headers: { origin: added } });
    expect(before.headers.get('access-control-allow-origin')).toBeNull();
    expect(edge.registry.requestsOf('getCorsOrigins')).toHaveLength(0);

    const created = await fetch(`${edge.url}/v1/platforms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        platformKey: 'NEW_SHOP',
        displayName: 'New shop',
        redirectPairs: [
          { label: 'Web', returnUrl: added, callbackUrl: `${added}/cb`, isDefault: true },
        ],
      }),
    });
    expect(created.status).toBe(201);

    const after = await request('/v1/platforms', { headers: { origin: added } });
    expect(after.headers.get('access-control-allow-origin')).toBe(added);
    expect(edge.registry.requestsOf('getCorsOrigins')).toHaveLength(1);
  });
});

describe('the allowlist cache', () => {
  const logger = createLogger({ service: 'test', level: 'silent' });

  function setUp() {
    const registry = createFakeRegistry();
    registry.corsOrigins = [SHOP];
    let now = 0;
    const cors = createCors({
      corsOrigins: [ADMIN_UI],
      identityIssuer: 'https://id.example.test/api/auth/env/PROD',
      registry: createClient(
        RegistryService,
        createRouterTransport(routesOf([registry.implementation])),
      ),
      logger,
      ttlMs: 30_000,
      now: () => now,
    });
    return { registry, cors, advance: (ms: number) => void (now += ms) };
  }

  it('includes configured origins, the issuer origin and registry origins', async () => {
    const { cors } = setUp();
    expect(await cors.isAllowedOrigin(ADMIN_UI)).toBe(true);
    expect(await cors.isAllowedOrigin('https://id.example.test')).toBe(true);
    expect(await cors.isAllowedOrigin(SHOP)).toBe(true);
    expect(await cors.isAllowedOrigin('https://other.example.test')).toBe(false);
  });

  it('asks the registry once per TTL, sharing concurrent look-ups', async () => {
    const { registry, cors, advance } = setUp();
    await Promise.all([cors.isAllowedOrigin(SHOP), cors.isAllowedOrigin(SHOP)]);
    registry.corsOrigins = [];
    advance(29_000);
    expect(await cors.isAllowedOrigin(SHOP)).toBe(true);
    expect(registry.requestsOf('getCorsOrigins')).toHaveLength(1);
    advance(2_000);
    expect(await cors.isAllowedOrigin(SHOP)).toBe(false);
    expect(registry.requestsOf('getCorsOrigins')).toHaveLength(2);
  });

  it('falls back to the configured origins while the registry fails, without caching that', async () => {
    const { registry, cors } = setUp();
    registry.failNextWith(new GatewayError('SERVICE_UNAVAILABLE', 'down'));
    expect(await cors.isAllowedOrigin(SHOP)).toBe(false);
    expect(await cors.isAllowedOrigin(ADMIN_UI)).toBe(true);
    expect(await cors.isAllowedOrigin(SHOP)).toBe(true);
  });

  it('does not keep a refresh that was under way when invalidated', async () => {
    // A registry whose answer is held back until the test releases it.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let origins = [SHOP];
    let calls = 0;
    const registry = {
      async getCorsOrigins() {
        calls += 1;
        const answer = { origins };
        await gate;
        return answer;
      },
    } as unknown as Parameters<typeof createCors>[0]['registry'];
    const cors = createCors({
      corsOrigins: [],
      identityIssuer: 'https://id.example.test',
      registry,
      logger,
    });
    const during = cors.isAllowedOrigin(SHOP);
    origins = [];
    cors.invalidate();
    release();
    expect(await during).toBe(true);
    expect(await cors.isAllowedOrigin(SHOP)).toBe(false);
    expect(calls).toBe(2);
  });
});
