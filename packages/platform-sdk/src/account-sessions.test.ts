import { describe, expect, it } from '@jest/globals';
import { GatewayPlatformError } from './errors.js';
import { createGatewayPlatform } from './gateway-platform.js';

// What the SDK sends for the user's own sessions and what it does with the cache: the stub
// fetch stands in for the network only; the gateway itself answers these calls in
// services/all-in-one/src/platform-sdk.test.ts.

type Seen = { method: string; url: string; headers: Headers; body: unknown };

const userId = '0b5f0f2e-4c1e-4e43-9d2a-7f3b7c3e9a11';
const expiresAt = new Date(Date.now() + 3_600_000).toISOString();

function platformWith(answer: (seen: Seen) => Response) {
  const seen: Seen[] = [];
  const platform = createGatewayPlatform({
    gatewayUrl: 'http://gateway.test',
    platformKey: 'SHOP',
    bffKey: { clientId: 'bff-id', clientSecret: 'bff-secret' },
    expectedEnvironment: 'PROD',
    fetch: (input, init = {}) => {
      const call = {
        method: init.method ?? 'GET',
        url: String(input),
        headers: new Headers(init.headers),
        body: init.body,
      };
      seen.push(call);
      return Promise.resolve(answer(call));
    },
  });
  return { platform, seen };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** The gateway's introspection of a token of the user: a session named after the token. */
const introspection = (token: string) =>
  json(200, {
    active: true,
    sessionId: `session-of-${token}`,
    expiresAt,
    platformKey: 'SHOP',
    user: {
      id: userId,
      issuer: 'http://localhost:9000',
      subject: 'user-1',
      email: 'user-1@example.test',
      emailVerified: true,
      status: 'active',
    },
    environment: { key: 'PROD', tier: 'development' },
  });

describe('listSessions', () => {
  it('asks GET /v1/account/sessions with the token as the gateway cookie, and no Origin', async () => {
    const item = {
      id: '6f9619ff-8b86-4d01-b42d-00cf4fc964ff',
      platform: { key: 'SHOP', name: 'Shop' },
      environment: { key: 'PROD', tier: 'development' },
      createdAt: new Date().toISOString(),
      expiresAt,
      current: true,
    };
    const { platform, seen } = platformWith(() => json(200, { items: [item] }));
    expect(await platform.listSessions('tok;en=1')).toEqual([item]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url).toBe('http://gateway.test/v1/account/sessions');
    expect(seen[0]?.headers.get('cookie')).toBe('svc_auth_session=tok%3Ben%3D1');
    expect(seen[0]?.headers.get('origin')).toBeNull();
    expect(seen[0]?.headers.get('authorization')).toBeNull();
    expect(seen[0]?.body).toBeUndefined();
  });

  it("carries the gateway's refusal of an ended session", async () => {
    const { platform } = platformWith(() =>
      json(401, { code: 'UNAUTHORIZED', message: 'Sign in first.' }),
    );
    await expect(platform.listSessions('ended')).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
    });
  });
});

describe('endOtherSessions', () => {
  it('asks DELETE ?except=current with the gateway cookie and Origin, and answers the count', async () => {
    const { platform, seen } = platformWith(() => json(200, { revokedSessions: 2 }));
    const answer = await platform.endOtherSessions({
      gatewayToken: 'token-here',
      origin: 'https://shop.example',
    });
    expect(answer).toEqual({ revokedSessions: 2 });
    expect(seen[0]?.method).toBe('DELETE');
    expect(seen[0]?.url).toBe('http://gateway.test/v1/account/sessions?except=current');
    expect(seen[0]?.headers.get('cookie')).toBe('svc_auth_session=token-here');
    expect(seen[0]?.headers.get('origin')).toBe('https://shop.example');
  });

  it('refuses an origin that is not scheme://host[:port] without calling the gateway', async () => {
    const { platform, seen } = platformWith(() => json(200, { revokedSessions: 0 }));
    const refused = platform.endOtherSessions({
      gatewayToken: 'token-here',
      origin: 'https://shop.example/path',
    });
    await expect(refused).rejects.toBeInstanceOf(GatewayPlatformError);
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_ORIGIN' });
    expect(seen).toHaveLength(0);
  });

  it("asks the gateway again about the user's other sessions: their cached answers are gone", async () => {
    const { platform, seen } = platformWith((call) =>
      call.url.endsWith('/introspect')
        ? introspection((JSON.parse(String(call.body)) as { token: string }).token)
        : json(200, { revokedSessions: 1 }),
    );
    await platform.introspect('token-here');
    await platform.introspect('token-elsewhere');
    await platform.introspect('token-elsewhere');
    const introspections = () => seen.filter((call) => call.url.endsWith('/introspect')).length;
    expect(introspections()).toBe(2);
    await platform.endOtherSessions({ gatewayToken: 'token-here', origin: 'https://shop.example' });
    await platform.introspect('token-elsewhere');
    expect(introspections()).toBe(3);
  });

  it('drops the cached answers also when the gateway refuses', async () => {
    const { platform, seen } = platformWith((call) =>
      call.url.endsWith('/introspect')
        ? introspection('token-here')
        : json(403, { code: 'FORBIDDEN', message: 'Origin not allowed.' }),
    );
    await platform.introspect('token-here');
    await expect(
      platform.endOtherSessions({ gatewayToken: 'token-here', origin: 'https://shop.example' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    await platform.introspect('token-here');
    expect(seen.filter((call) => call.url.endsWith('/introspect'))).toHaveLength(2);
  });
});
