import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 2.15 and 5: credentialed CORS from one allowlist, never `*`.
let t: GatewayUnderTest;

beforeAll(async () => {
  t = await startGatewayUnderTest({ CORS_ORIGINS: 'https://console.example.com' });
});
afterAll(async () => {
  await t.close();
});

async function corsFor(origin: string, method = 'GET') {
  return t.call(method, '/v1/platforms', { headers: { origin } });
}

describe('CORS', () => {
  it('echoes an origin from CORS_ORIGINS exactly, with credentials', async () => {
    const { headers } = await corsFor('https://console.example.com');
    expect(headers.get('access-control-allow-origin')).toBe('https://console.example.com');
    expect(headers.get('access-control-allow-credentials')).toBe('true');
    expect(headers.get('vary')).toMatch(/Origin/i);
  });

  it('allows the deployment issuer origin', async () => {
    const { headers } = await corsFor(new URL(t.provider.issuer).origin);
    expect(headers.get('access-control-allow-origin')).toBe(new URL(t.provider.issuer).origin);
  });

  it('sends no CORS headers to other origins, and never *', async () => {
    const { headers } = await corsFor('https://evil.example.com');
    expect(headers.get('access-control-allow-origin')).toBeNull();
    expect(headers.get('access-control-allow-credentials')).toBeNull();
  });

  it("adds an active platform's return-URL origin as soon as it is registered, and drops it when deactivated", async () => {
    expect(
      (await corsFor('http://shop.localhost:3000')).headers.get('access-control-allow-origin'),
    ).toBeNull();
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey: 'SHOP',
        displayName: 'Shop',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: 'http://shop.localhost:3000/',
            callbackUrl: 'http://shop.localhost:3000/cb',
            isDefault: true,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(
      (await corsFor('http://shop.localhost:3000')).headers.get('access-control-allow-origin'),
    ).toBe('http://shop.localhost:3000');
    await t.call('DELETE', '/v1/platforms/SHOP');
    expect(
      (await corsFor('http://shop.localhost:3000')).headers.get('access-control-allow-origin'),
    ).toBeNull();
  });

  it('answers a preflight from an allowed origin with 204', async () => {
    const response = await fetch(`${t.gateway.url}/v1/platforms`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://console.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://console.example.com');
    expect(response.headers.get('access-control-allow-methods')).toMatch(/POST/);
  });
});
