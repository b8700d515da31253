import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis } from '@gateway/db';
import {
  createGatewayPlatform,
  gatewayAuth,
  getSignedIn,
  requireSignIn,
} from '@gateway/platform-sdk';
import { createCookieJar, type CookieJar } from '@gateway/testkit';
import express from 'express';
import type { Redis } from 'ioredis';
import { startFreezableRedis, type FreezableRedis } from './testing/freezable-redis.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import type { IssuedKey } from './testing/login-steps.js';

// The platform SDK's retried exchange against the real gateway: with the login state in a
// redis-server of this file alone, frozen while the platform's callback exchanges its code,
// the gateway answers 503 with Retry-After; the SDK waits and sends the same code with the
// same key again, and the browser is signed in by the one callback visit.

/** The store's Redis command time-out, so a frozen exchange answers 503 after a second. */
const REDIS_TIMEOUT_MS = 1_000;

let server: FreezableRedis;
let redis: Redis;
let t: GatewayUnderTest;
let appServer: Server;
let appOrigin = '';
let bff: IssuedKey;
/** Each answer of the gateway to the platform's exchanges, in order. */
const exchangeStatuses: number[] = [];
/** Called once the gateway answered an exchange 503: the test thaws Redis there. */
let onUnavailableExchange: () => void = () => undefined;

beforeAll(async () => {
  server = await startFreezableRedis();
  redis = await connectRedis({
    url: `redis://127.0.0.1:${server.port}`,
    keyPrefix: 'gw:',
    timeoutMs: REDIS_TIMEOUT_MS,
  });
  t = await startGatewayUnderTest({}, {}, { redis });
  appServer = createServer();
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://localhost:${(appServer.address() as AddressInfo).port}`;
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'RETRY_APP',
      displayName: 'Retry app',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: `${appOrigin}/`,
          callbackUrl: `${appOrigin}/auth/callback`,
          isDefault: true,
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  bff = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
  appServer.on('request', platformApp());
});

afterAll(async () => {
  appServer?.closeAllConnections();
  await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
  await t?.close();
  redis?.disconnect();
  await server?.stop();
});

/** The SDK's Express set-up, with the real fetch watched for the exchange's answers. */
function platformApp(): express.Express {
  const platform = createGatewayPlatform({
    gatewayUrl: t.gateway.url,
    platformKey: 'RETRY_APP',
    bffKey: bff,
    expectedEnvironment: 'PROD',
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (new URL(String(input)).pathname === '/v1/auth/exchange') {
        exchangeStatuses.push(response.status);
        if (response.status === 503) onUnavailableExchange();
      }
      return response;
    },
  });
  const app = express();
  app.use(gatewayAuth(platform));
  app.get('/me', requireSignIn(), (_req, res) => {
    res.type('text').send(getSignedIn(res)?.result.user.sub ?? '');
  });
  return app;
}

type Visit = { status: number; location: string; setCookies: string[]; text: string };

/** A browser's GET with its cookies, redirects not followed. */
async function visit(jar: CookieJar, url: string): Promise<Visit> {
  const cookie = jar.headerFor(url);
  const response = await fetch(url, {
    redirect: 'manual',
    headers: cookie === undefined ? {} : { cookie },
  });
  jar.store(url, response);
  return {
    status: response.status,
    location: response.headers.get('location') ?? '',
    setCookies: response.headers.getSetCookie(),
    text: await response.text(),
  };
}

describe('a platform callback while the gateway answers its exchange 503', () => {
  it('is retried by the SDK with the same code after Retry-After, and signs the browser in', async () => {
    const app = createCookieJar();
    const gateway = createCookieJar();
    const login = await visit(app, `${appOrigin}/auth/login?returnTo=%2Fme`);
    const start = await visit(gateway, login.location);
    const back = await t.provider.browser().signIn(start.location, 'user-1');
    const callback = await visit(gateway, `${t.gateway.url}${back.pathname}${back.search}`);
    expect(callback.location.startsWith(`${appOrigin}/auth/callback?code=handoff_`)).toBe(true);

    // Redis stalls while the platform exchanges; it comes back once the gateway said 503.
    const thawed = new Promise<void>((resolve) => {
      onUnavailableExchange = () => {
        server.thaw();
        resolve();
      };
    });
    server.freeze();
    let landed: Visit;
    try {
      landed = await visit(app, callback.location);
    } finally {
      server.thaw();
    }
    await thawed;

    expect(exchangeStatuses).toEqual([503, 200]);
    expect(landed.status).toBe(302);
    expect(landed.location).toBe(`${appOrigin}/me`);
    const me = await visit(app, `${appOrigin}/me`);
    expect(me).toMatchObject({ status: 200, text: 'user-1' });
  });
});
