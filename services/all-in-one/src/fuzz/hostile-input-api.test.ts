import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listen, type ListeningServer } from '@gateway/edge';
import { startGatewayUnderTest, type GatewayUnderTest } from '../testing/gateway-under-test.js';
import { deeplyNestedJson } from './openapi-fuzz-inputs.js';

// Hostile inputs through the whole gateway over HTTP (PostgreSQL, a real OpenID Provider):
// each is refused with the spec's error body and writes nothing.

let t: GatewayUnderTest;
let userToken: string;

const shop = (overrides: Record<string, unknown> = {}) => ({
  platformKey: 'SHOP',
  displayName: 'Shop',
  redirectPairs: [
    {
      label: 'web',
      returnUrl: 'http://localhost:3000/app',
      callbackUrl: 'http://localhost:3000/cb',
      isDefault: true,
    },
  ],
  ...overrides,
});
const environment = (overrides: Record<string, unknown> = {}) => ({
  environmentKey: 'STAGING',
  displayName: 'Staging',
  tier: 'staging',
  issuer: 'http://localhost:9/staging',
  oidcClientId: 'gateway',
  ...overrides,
});

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    { accounts: [{ accountId: 'user-1', email: 'user-1@example.test', emailVerified: true }] },
  );
  expect((await t.call('POST', '/v1/platforms', { body: shop() })).status).toBe(201);
  userToken = (await t.provider.userTokens({ accountId: 'user-1' })).accessToken;
});
afterAll(async () => {
  await t.close();
});

async function platformCount(): Promise<number> {
  const rows = await t.db.knex('registry.platforms').count({ n: '*' });
  return Number(rows[0]?.n);
}

async function expectRefused(
  answer: Promise<{ status: number; body: Record<string, unknown> }>,
  code = 'VALIDATION_ERROR',
): Promise<void> {
  const { status, body } = await answer;
  expect({ status, code: body.code, message: typeof body.message }).toEqual({
    status: 400,
    code,
    message: 'string',
  });
}

/** Raw bytes to the gateway, and everything it answers until it closes the connection. */
function exchangeRaw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(t.gateway.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(request);
  });
}

function jsonBodyOf(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('hostile input', () => {
  it('refuses malformed percent-encoding in any path parameter, without credentials too', async () => {
    await expectRefused(t.call('GET', '/v1/avatars/%ff', { token: null }));
    await expectRefused(t.call('GET', '/v1/platforms/%E0%A4%A'));
    await expectRefused(t.call('DELETE', '/v1/platforms/SHOP/credentials/%c0%af'));
    const asset = await fetch(`${t.gateway.url}/docs/assets/%ff`);
    expect(asset.status).toBe(400);
    expect(((await asset.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
  });

  it('refuses U+0000 in every stored string and in look-ups, writing nothing', async () => {
    await expectRefused(
      t.call('POST', '/v1/platforms', {
        body: shop({ platformKey: 'A1', displayName: 'a\u0000' }),
      }),
    );
    await expectRefused(
      t.call('POST', '/v1/platforms', {
        body: shop({ platformKey: 'A2', metadata: { a: 'x\u0000' } }),
      }),
    );
    const pair = {
      label: 'w\u0000b',
      returnUrl: 'http://localhost:3000/',
      callbackUrl: 'http://localhost:3000/cb',
      isDefault: true,
    };
    await expectRefused(
      t.call('POST', '/v1/platforms', { body: shop({ platformKey: 'A3', redirectPairs: [pair] }) }),
    );
    await expectRefused(
      t.call('POST', '/v1/identity-environments', {
        body: environment({ displayName: 'x\u0000' }),
      }),
    );
    await expectRefused(
      t.call('POST', '/v1/identity-environments', {
        body: environment({ issuer: 'http://localhost:9/\u0000' }),
      }),
    );
    await expectRefused(
      t.call('POST', '/v1/platforms/SHOP/onboarding/fields', {
        body: { fieldKey: 'company', label: 'Co\u0000', fieldType: 'TEXT' },
      }),
    );
    await expectRefused(t.call('GET', '/v1/admin/users?search=a%00b'));
    await expectRefused(
      t.call('PATCH', '/v1/profile/me', { token: userToken, body: { firstName: 'Ann\u0000' } }),
    );
    expect(await platformCount()).toBe(1);
  });

  it('refuses deeply nested JSON before it reaches a recursive function', async () => {
    const deep = `{"platformKey":"DEEP","displayName":"Deep","redirectPairs":[],"metadata":${deeplyNestedJson(5000)}}`;
    expect(deep.length).toBeGreaterThan(30_000);
    await expectRefused(
      t.call('POST', '/v1/platforms', {
        rawBody: deep,
        headers: { 'content-type': 'application/json' },
      }),
    );
    await expectRefused(
      t.call('PATCH', '/v1/platforms/SHOP', {
        rawBody: `{"metadata":${deeplyNestedJson(5000)}}`,
        headers: { 'content-type': 'application/json' },
      }),
    );
    await expectRefused(
      t.call('PATCH', '/v1/profile/me', {
        token: userToken,
        rawBody: `{"metadata":${deeplyNestedJson(5000)}}`,
        headers: { 'content-type': 'application/json' },
      }),
    );
    await expectRefused(
      t.call('PATCH', '/v1/platforms/SHOP', {
        body: { metadata: JSON.parse(deeplyNestedJson(11)) as unknown },
      }),
    );
    expect(await platformCount()).toBe(1);
  });

  it('refuses unpaired surrogates, reserved and empty member names in metadata', async () => {
    const metadataOf = (members: string) => ({
      rawBody: `{"metadata":{${members}}}`,
      headers: { 'content-type': 'application/json' },
    });
    for (const members of [
      '"\\ud800":1',
      '"a":"\\udc00"',
      '"__proto__":{"x":1}',
      '"constructor":1',
      '"":1',
    ]) {
      await expectRefused(t.call('PATCH', '/v1/platforms/SHOP', metadataOf(members)));
      await expectRefused(
        t.call('PATCH', '/v1/profile/me', { token: userToken, ...metadataOf(members) }),
      );
    }
    const stored = await t.call('GET', '/v1/platforms/SHOP');
    expect(stored.body.metadata).toEqual({});
  });

  it('refuses display names with control characters, bidi overrides or only whitespace', async () => {
    for (const displayName of [
      'a\tb',
      'a\u0007',
      'evil\u202egnp.exe',
      'x\u2066y',
      '   ',
      '\u3000',
    ]) {
      await expectRefused(
        t.call('POST', '/v1/platforms', { body: shop({ platformKey: 'NAMED', displayName }) }),
      );
      await expectRefused(
        t.call('PATCH', '/v1/identity-environments/PROD', { body: { displayName } }),
      );
    }
    expect(await platformCount()).toBe(1);
  });

  it('refuses a returnTo whose path parameters hide a dot segment (INVALID_REDIRECT)', async () => {
    for (const returnTo of [
      '/app/..;/admin',
      'http://localhost:3000/app/..;x=1/admin',
      '/app/%2e%2e;/x',
    ]) {
      const answer = await fetch(
        `${t.gateway.url}/v1/auth/start?platformKey=SHOP&returnTo=${encodeURIComponent(returnTo)}`,
        { redirect: 'manual' },
      );
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { code: string }).code).toBe('INVALID_REDIRECT');
    }
  });

  it('answers what node refuses itself with the JSON error body', async () => {
    const tooLarge = await exchangeRaw(
      `GET /v1/platforms HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /);
    expect(jsonBodyOf(tooLarge).code).toBe('REQUEST_HEADER_FIELDS_TOO_LARGE');
    const malformed = await exchangeRaw('GARBAGE\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonBodyOf(malformed).code).toBe('VALIDATION_ERROR');
    const expectation = await exchangeRaw(
      `POST /v1/platforms HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(expectation).toMatch(/^HTTP\/1\.1 417 /);
    expect(jsonBodyOf(expectation).code).toBe('EXPECTATION_FAILED');
    const hostless = await exchangeRaw('GET /health/live HTTP/1.1\r\n\r\n');
    expect(hostless).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonBodyOf(hostless).code).toBe('VALIDATION_ERROR');
  });

  it('frames /docs nowhere', async () => {
    for (const path of ['/docs', '/openapi.json']) {
      const answer = await fetch(`${t.gateway.url}${path}`);
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
    }
    const docs = await fetch(`${t.gateway.url}/docs`);
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('a request that never completes', () => {
  let server: ListeningServer;
  beforeAll(async () => {
    server = await listen((_req, res) => res.end(), 0, '127.0.0.1', {
      headersTimeoutMs: 200,
      requestTimeoutMs: 400,
      checkIntervalMs: 50,
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('gets 408 with the JSON error body, whether its headers or its request line stop', async () => {
    for (const partial of ['GET /health/live HTTP/1.1\r\nHost: x\r\n', 'GET /v1/plat']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1');
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.write(partial);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(jsonBodyOf(answer).code).toBe('REQUEST_TIMEOUT');
    }
  });
});
