import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import {
  createGatewayPlatform,
  createMemorySessionStore,
  gatewayAuth,
  GatewayPlatformError,
  getSignedIn,
  optionalSignIn,
  requireSignIn,
  type ExchangeResult,
  type GatewayPlatform,
  type GatewayPlatformOptions,
  type SessionStore,
} from '@gateway/platform-sdk';
import { createCookieJar, startTcpProxy, type CookieJar, type TcpProxy } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import type { IssuedKey } from './testing/login-steps.js';

// @gateway/platform-sdk against the real all-in-one gateway (PostgreSQL, a real OpenID
// Provider): a platform built on the SDK's Express middleware signs users in end to end
// (spec 1 steps 1-6), and the SDK's refusals, introspect cache and unavailability handling
// are checked against what the gateway really answers.

let t: GatewayUnderTest;
let keys: { bff: IssuedKey; backend: IssuedKey };
let appServer: Server;
/** The platform's origin as browsers and the gateway registry see it. */
let appOrigin = '';
/** The Express app currently served at appOrigin: each test mounts the SDK it needs. */
let currentApp: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;

beforeAll(async () => {
  t = await startGatewayUnderTest();
  appServer = createServer((req, res) => {
    if (currentApp === undefined) res.writeHead(503).end();
    else currentApp(req, res);
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://localhost:${(appServer.address() as AddressInfo).port}`;
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SDK_APP',
      displayName: 'SDK app',
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
  const backend = await t.call('POST', '/v1/platforms/SDK_APP/credentials', {
    body: { kind: 'backend' },
  });
  keys = {
    bff: (created.body.credentials as IssuedKey[])[0] as IssuedKey,
    backend: (backend.body.credentials as IssuedKey[])[0] as IssuedKey,
  };
});

afterAll(async () => {
  appServer.closeAllConnections();
  await new Promise<void>((resolve) => appServer.close(() => resolve()));
  await t.close();
});

// ---- The platform under test ----

type GatewayCalls = { paths: string[]; count(path: string): number };

/** The SDK with the real fetch, wrapped to count the calls that reach the gateway. */
function sdk(options: Partial<GatewayPlatformOptions> = {}): {
  platform: GatewayPlatform;
  calls: GatewayCalls;
} {
  const paths: string[] = [];
  const platform = createGatewayPlatform({
    gatewayUrl: t.gateway.url,
    platformKey: 'SDK_APP',
    bffKey: keys.bff,
    backendKey: keys.backend,
    expectedEnvironment: 'PROD',
    fetch: (input, init) => {
      paths.push(new URL(String(input)).pathname);
      return fetch(input, init);
    },
    ...options,
  });
  return {
    platform,
    calls: { paths, count: (path) => paths.filter((p) => p === path).length },
  };
}

/** Serves an app with the four lines of set-up, plus a store the test can look into. */
function serve(platform: GatewayPlatform): { store: SessionStore; kept: Map<string, string> } {
  const memory = createMemorySessionStore();
  const kept = new Map<string, string>(); // store id → gatewayToken
  const store: SessionStore = {
    get: (id) => memory.get(id),
    set: (id, value, expiresAt) => {
      kept.set(id, value.session.gatewayToken);
      return memory.set(id, value, expiresAt);
    },
    delete: (id) => {
      kept.delete(id);
      return memory.delete(id);
    },
  };
  const app = express();
  app.use(gatewayAuth(platform, { store }));
  app.get('/me', requireSignIn(), (_req, res) => {
    const signedIn = getSignedIn(res);
    res.json({
      sub: signedIn?.result.user.sub,
      environment: signedIn?.result.environment.key,
      sessionId: signedIn?.session.sessionId,
      email: signedIn?.session.user.email,
    });
  });
  app.get('/', optionalSignIn(), (_req, res) => {
    res.type('text').send(getSignedIn(res)?.result.user.sub ?? 'signed out');
  });
  currentApp = app;
  return { store, kept };
}

// ---- A browser: one cookie jar per host, redirects followed by hand ----

type Browser = { app: CookieJar; gateway: CookieJar };
const newBrowser = (): Browser => ({ app: createCookieJar(), gateway: createCookieJar() });

type Visit = { status: number; location: string | null; setCookies: string[]; text: string };

async function visit(
  browser: Browser,
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Visit> {
  const jar = new URL(url).origin === appOrigin ? browser.app : browser.gateway;
  const cookie = jar.headerFor(url);
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: { ...init.headers, ...(cookie === undefined ? {} : { cookie }) },
  });
  jar.store(url, response);
  return {
    status: response.status,
    location: response.headers.get('location'),
    setCookies: response.headers.getSetCookie(),
    text: await response.text(),
  };
}

/**
 * The platform's login route → gateway start → identity provider sign-in → gateway callback:
 * answers the platform callback URL carrying `code=handoff_...`, not yet visited.
 */
async function reachPlatformCallback(
  browser: Browser,
  gatewayUrl: string,
  returnTo = '/me',
): Promise<string> {
  const login = await visit(
    browser,
    `${appOrigin}/auth/login?returnTo=${encodeURIComponent(returnTo)}`,
  );
  expect(login.status).toBe(302);
  const start = await visit(browser, login.location ?? '');
  expect(start.status).toBe(302);
  const back = await t.provider.browser().signIn(start.location ?? '', 'user-1');
  const callback = await visit(browser, `${gatewayUrl}${back.pathname}${back.search}`);
  expect(callback.status).toBe(302);
  const platformCallback = callback.location ?? '';
  expect(platformCallback.startsWith(`${appOrigin}/auth/callback?code=handoff_`)).toBe(true);
  return platformCallback;
}

/** A whole sign-in through the middleware: answers the browser, signed in. */
async function signIn(gatewayUrl = t.gateway.url): Promise<Browser> {
  const browser = newBrowser();
  const landed = await visit(browser, await reachPlatformCallback(browser, gatewayUrl));
  expect(landed.status).toBe(302);
  return browser;
}

/** A sign-in through the SDK directly (no middleware): answers the exchange result. */
async function exchangeDirectly(platform: GatewayPlatform): Promise<ExchangeResult> {
  const browser = newBrowser();
  serve(platform);
  const callbackUrl = new URL(await reachPlatformCallback(browser, t.gateway.url));
  const { result } = await platform.handleCallback({
    code: callbackUrl.searchParams.get('code') ?? undefined,
    cookieHeader: browser.app.headerFor(callbackUrl),
  });
  return result;
}

async function failureOf(promise: Promise<unknown>): Promise<GatewayPlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayPlatformError) return error;
    throw error;
  }
  throw new Error('it succeeded');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------

describe('signing in through the Express middleware (spec 1, 4.1, 4.4)', () => {
  it('redirects to the gateway start with a pending cookie, and back to returnTo signed in', async () => {
    const { platform, calls } = sdk();
    const { kept } = serve(platform);
    const browser = newBrowser();

    const login = await visit(
      browser,
      `${appOrigin}/auth/login?returnTo=%2Fme%3Ftab%3D2&screen=up`,
    );
    expect(login.status).toBe(302);
    const start = new URL(login.location ?? '');
    expect(`${start.origin}${start.pathname}`).toBe(`${t.gateway.url}/v1/auth/start`);
    expect(Object.fromEntries(start.searchParams)).toEqual({
      platformKey: 'SDK_APP',
      returnTo: expect.stringMatching(
        new RegExp(`^${appOrigin}/me\\?tab=2&gw_login_nonce=[A-Za-z0-9_-]{43}$`),
      ),
      defaultScreen: 'up',
    });
    expect(login.setCookies).toEqual([
      expect.stringMatching(
        /^gw_login_pending=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/,
      ),
    ]);

    const gatewayStart = await visit(browser, start.href);
    const back = await t.provider.browser().signIn(gatewayStart.location ?? '', 'user-1');
    const gatewayCallback = await visit(browser, `${t.gateway.url}${back.pathname}${back.search}`);
    const landed = await visit(browser, gatewayCallback.location ?? '');
    expect(landed.status).toBe(302);
    expect(landed.location).toBe(`${appOrigin}/me?tab=2`);
    expect(landed.setCookies).toEqual(
      expect.arrayContaining([
        'gw_login_pending=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
        expect.stringMatching(
          /^platform_session=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/,
        ),
      ]),
    );
    expect(calls.count('/v1/auth/exchange')).toBe(1);

    const me = await visit(browser, landed.location ?? '');
    expect(me.status).toBe(200);
    expect(JSON.parse(me.text)).toMatchObject({
      sub: 'user-1',
      environment: 'PROD',
      email: 'user-1@example.test',
    });

    // The gatewayToken stays on the server, kept under a hash of the cookie, not the cookie.
    const [storeId, gatewayToken] = [...kept][0] ?? ['', ''];
    const sessionCookie = browser.app.headerFor(`${appOrigin}/me`) ?? '';
    expect(gatewayToken).not.toBe('');
    expect(sessionCookie).not.toContain(gatewayToken);
    expect(sessionCookie).not.toContain(storeId);
    expect(me.text).not.toContain(gatewayToken);

    expect((await visit(browser, `${appOrigin}/`)).text).toBe('user-1');
    expect((await visit(newBrowser(), `${appOrigin}/`)).text).toBe('signed out');
  });

  it('sends a signed-out visitor of a protected page to the login route with returnTo', async () => {
    serve(sdk().platform);
    const visitor = await visit(newBrowser(), `${appOrigin}/me?x=1`);
    expect(visitor.status).toBe(302);
    expect(visitor.location).toBe(`/auth/login?returnTo=${encodeURIComponent('/me?x=1')}`);
  });

  it('never sends a returnTo off the site to the gateway', async () => {
    serve(sdk().platform);
    const login = await visit(newBrowser(), `${appOrigin}/auth/login?returnTo=//evil.example/x`);
    const returnTo = new URL(login.location ?? '').searchParams.get('returnTo') ?? '';
    expect(new URL(returnTo).origin).toBe(appOrigin);
    expect(new URL(returnTo).pathname).toBe('/');
  });
});

describe('what the callback refuses (spec 4.4)', () => {
  it('refuses a callback without the pending cookie, before spending the code', async () => {
    const { platform, calls } = sdk();
    serve(platform);
    const browser = newBrowser();
    const callbackUrl = await reachPlatformCallback(browser, t.gateway.url);

    // Login CSRF: the attacker's code in a victim's browser that started no login here.
    const victim = await visit(newBrowser(), callbackUrl);
    expect(victim.status).toBe(403);
    expect(victim.text).toBe('This sign-in was not started here. Please sign in again.');
    expect(victim.setCookies.some((c) => c.startsWith('platform_session='))).toBe(false);
    // A link prefetcher's HEAD is not a sign-in either.
    const cookie = browser.app.headerFor(callbackUrl) ?? '';
    const head = await fetch(callbackUrl, { method: 'HEAD', headers: { cookie } });
    expect(head.status).toBe(404);
    expect(calls.count('/v1/auth/exchange')).toBe(0);

    const direct = await failureOf(
      platform.handleCallback({
        code: new URL(callbackUrl).searchParams.get('code') ?? undefined,
        cookieHeader: 'other=1',
      }),
    );
    expect(direct).toMatchObject({ code: 'LOGIN_NOT_PENDING', status: undefined });

    // The code was not spent: the browser that started the login still gets in.
    expect((await visit(browser, callbackUrl)).status).toBe(302);
  });

  it('refuses a callback URL replayed in a browser that started its own login; the code is spent and its own browser signs in again', async () => {
    const { platform, calls } = sdk();
    const { kept } = serve(platform);
    const victim = newBrowser();
    const callbackUrl = await reachPlatformCallback(victim, t.gateway.url);
    const other = await reachPlatformCallback(newBrowser(), t.gateway.url);

    // The attacker starts a login here (a pending cookie of their own), then opens the
    // victim's callback URL, from the victim's history or an access log.
    const attacker = newBrowser();
    expect((await visit(attacker, `${appOrigin}/auth/login?returnTo=%2Fme`)).status).toBe(302);
    const direct = await failureOf(
      platform.handleCallback({
        code: new URL(other).searchParams.get('code') ?? undefined,
        cookieHeader: attacker.app.headerFor(other),
      }),
    );
    expect(direct).toMatchObject({ code: 'LOGIN_NOT_THIS_BROWSER', status: undefined });
    const replay = await visit(attacker, callbackUrl);
    expect(replay.status).toBe(403);
    expect(replay.text).toBe('This sign-in was not started here. Please sign in again.');
    expect(replay.setCookies.some((c) => c.startsWith('platform_session='))).toBe(false);
    expect(kept.size).toBe(0);
    expect((await visit(attacker, `${appOrigin}/`)).text).toBe('signed out');

    // The code is used (spec 3.2): the victim's callback sends it to sign in again.
    const landed = await visit(victim, callbackUrl);
    expect(landed.status).toBe(302);
    expect(landed.location).toBe('/auth/login');
    expect(kept.size).toBe(0);
    const again = await visit(victim, await reachPlatformCallback(victim, t.gateway.url));
    expect(again.location).toBe(`${appOrigin}/me`);
    expect((await visit(victim, `${appOrigin}/`)).text).toBe('user-1');
    expect(kept.size).toBe(1);
    expect(calls.count('/v1/auth/exchange')).toBe(4);
  });

  it('refuses a callback whose login carried no nonce or another one', async () => {
    const { platform, calls } = sdk();
    const { kept } = serve(platform);
    const another = platform.startLogin({ returnTo: `${appOrigin}/me` });
    const anotherReturnTo = new URL(another.url).searchParams.get('returnTo') ?? '';
    for (const returnTo of [`${appOrigin}/me`, anotherReturnTo]) {
      // A pending cookie from this platform's login route, then a start that is not its own:
      // straight at the gateway, with a returnTo without a nonce or with another login's.
      const browser = newBrowser();
      expect((await visit(browser, `${appOrigin}/auth/login?returnTo=%2Fme`)).status).toBe(302);
      const start = await visit(
        browser,
        `${t.gateway.url}/v1/auth/start?platformKey=SDK_APP&returnTo=${encodeURIComponent(returnTo)}`,
      );
      const back = await t.provider.browser().signIn(start.location ?? '', 'user-1');
      const callback = await visit(browser, `${t.gateway.url}${back.pathname}${back.search}`);
      const callbackUrl = callback.location ?? '';
      expect(callbackUrl).toContain('code=handoff_');

      const refused = await visit(browser, callbackUrl);
      expect(refused.status).toBe(403);
      expect(refused.setCookies.some((c) => c.startsWith('platform_session='))).toBe(false);
    }
    expect(kept.size).toBe(0);
    expect(calls.count('/v1/auth/exchange')).toBe(2);
  });

  // Spec 2.9: "Atomically single-use"; 3.2: "used or expired | exchange | any | 404"; 4.4:
  // "invalid, expired, used or wrong-platform code: 404".
  it('refuses a used code with NOT_FOUND (also the retry after a lost answer); the middleware sends the browser to sign in again, once', async () => {
    const { platform } = sdk();
    serve(platform);
    const browser = newBrowser();
    const callbackUrl = new URL(await reachPlatformCallback(browser, t.gateway.url));
    const request = {
      code: callbackUrl.searchParams.get('code') ?? undefined,
      cookieHeader: browser.app.headerFor(callbackUrl),
    };
    const first = await platform.handleCallback(request);
    expect(first.result.user.sub).toBe('user-1');
    expect(first.clearCookie).toBe('gw_login_pending=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax');
    const reused = await failureOf(platform.handleCallback(request));
    expect(reused).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    // Through the middleware: no session, and the browser is sent to sign in again.
    const replay = await visit(browser, callbackUrl.href);
    expect(replay.status).toBe(302);
    expect(replay.location).toBe('/auth/login');
    expect(replay.setCookies.some((c) => c.startsWith('platform_session='))).toBe(false);
    expect(replay.setCookies.some((c) => c.startsWith('gw_login_again=1;'))).toBe(true);
    // Once: a used code again within that round (a new pending cookie) shows the page.
    expect((await visit(browser, `${appOrigin}/auth/login`)).status).toBe(302);
    const again = await visit(browser, callbackUrl.href);
    expect(again.status).toBe(400);
    expect(again.text).not.toMatch(/NOT_FOUND|handoff/);
    // The new sign-in completes and ends the round.
    const landed = await visit(browser, await reachPlatformCallback(browser, t.gateway.url));
    expect(landed.status).toBe(302);
    expect(landed.setCookies.some((c) => c.startsWith('platform_session='))).toBe(true);
    expect(landed.setCookies.some((c) => c.startsWith('gw_login_again=;'))).toBe(true);
  });

  it('refuses an expired code with the gateway code NOT_FOUND', async () => {
    const { platform } = sdk();
    serve(platform);
    const browser = newBrowser();
    const callbackUrl = new URL(await reachPlatformCallback(browser, t.gateway.url));
    // The handoff TTL is 30 s at least (spec 2.15): let it pass in the database instead.
    await t.db
      .knex('authflow.handoffs')
      .whereNull('redeemed_at')
      .update({ expires_at: t.db.knex.raw("now() - interval '1 second'") });
    const expired = await failureOf(
      platform.handleCallback({
        code: callbackUrl.searchParams.get('code') ?? undefined,
        cookieHeader: browser.app.headerFor(callbackUrl),
      }),
    );
    expect(expired).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('refuses a sign-in through another environment than expected', async () => {
    const { platform } = sdk({ expectedEnvironment: 'PARTNER' });
    serve(platform);
    const browser = newBrowser();
    const callbackUrl = new URL(await reachPlatformCallback(browser, t.gateway.url));
    const refused = await failureOf(
      platform.handleCallback({
        code: callbackUrl.searchParams.get('code') ?? undefined,
        cookieHeader: browser.app.headerFor(callbackUrl),
      }),
    );
    expect(refused.code).toBe('UNEXPECTED_ENVIRONMENT');

    const viaMiddleware = await visit(browser, await reachPlatformCallback(browser, t.gateway.url));
    expect(viaMiddleware.status).toBe(403);
    expect(viaMiddleware.setCookies.some((c) => c.startsWith('platform_session='))).toBe(false);
  });
});

describe('introspection and its cache (spec 4.5)', () => {
  it('answers a second call within the TTL from the cache', async () => {
    const { platform, calls } = sdk();
    const result = await exchangeDirectly(platform);
    const first = await platform.introspect(result.session.gatewayToken);
    expect(first).toMatchObject({
      state: 'active',
      session: {
        sessionId: result.session.id,
        platformKey: 'SDK_APP',
        user: { id: result.user.id, subject: 'user-1' },
        environment: { key: 'PROD' },
      },
    });
    expect(await platform.introspect(result.session.gatewayToken)).toEqual(first);
    expect(calls.count('/v1/auth/introspect')).toBe(1);
  });

  it('introspects a page visit once per TTL through requireSignIn', async () => {
    const { platform, calls } = sdk();
    serve(platform);
    const browser = await signIn();
    for (let i = 0; i < 3; i += 1) {
      expect((await visit(browser, `${appOrigin}/me`)).status).toBe(200);
    }
    expect(calls.count('/v1/auth/introspect')).toBe(1);
  });

  it('never caches an inactive answer', async () => {
    const { platform, calls } = sdk();
    expect(await platform.introspect('not-a-session')).toEqual({ state: 'inactive' });
    expect(await platform.introspect('not-a-session')).toEqual({ state: 'inactive' });
    expect(calls.count('/v1/auth/introspect')).toBe(2);
  });

  it('never keeps an entry past the session expiresAt', async () => {
    const { platform, calls } = sdk({ introspectCacheSeconds: 60 });
    const result = await exchangeDirectly(platform);
    await t.db
      .knex('authflow.sessions')
      .where({ id: result.session.id })
      .update({ expires_at: t.db.knex.raw("now() + interval '2 seconds'") });
    const active = await platform.introspect(result.session.gatewayToken);
    expect(active.state).toBe('active');
    const expiresAt = active.state === 'active' ? Date.parse(active.session.expiresAt) : 0;
    expect(expiresAt - Date.now()).toBeLessThan(2_500);
    expect((await platform.introspect(result.session.gatewayToken)).state).toBe('active');
    expect(calls.count('/v1/auth/introspect')).toBe(1);

    await sleep(Math.max(0, expiresAt - Date.now()) + 100);
    expect(await platform.introspect(result.session.gatewayToken)).toEqual({ state: 'inactive' });
    expect(calls.count('/v1/auth/introspect')).toBe(2);
  });

  it('throws on wrong platform credentials (401) instead of signing anyone out', async () => {
    const { platform } = sdk({
      backendKey: { clientId: keys.backend.clientId, clientSecret: 'wrong' },
    });
    const refused = await failureOf(platform.introspect('any-token'));
    expect(refused).toMatchObject({ status: 401 });
  });
});

describe('logout (spec 4.6)', () => {
  it('ends the gateway session, drops it from the cache and answers the end-session URL', async () => {
    const { platform, calls } = sdk();
    const result = await exchangeDirectly(platform);
    expect((await platform.introspect(result.session.gatewayToken)).state).toBe('active');

    const { logoutUrl } = await platform.logout({
      gatewayToken: result.session.gatewayToken,
      origin: appOrigin,
    });
    const endSession = new URL(logoutUrl ?? '');
    expect(endSession.origin).toBe(new URL(t.provider.issuer).origin);
    expect(endSession.searchParams.get('client_id')).toBe('test-gateway');
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^eyJ/);

    // Not answered from the cache: the gateway says the token is dead now.
    expect(await platform.introspect(result.session.gatewayToken)).toEqual({ state: 'inactive' });
    expect(calls.count('/v1/auth/introspect')).toBe(2);
    // Idempotent (spec 4.6): nothing left to end.
    expect(
      await platform.logout({ gatewayToken: result.session.gatewayToken, origin: appOrigin }),
    ).toEqual({ logoutUrl: null });
  });

  it('logs out through the middleware: 303 to the identity end-session, platform session gone', async () => {
    const { platform } = sdk();
    const { kept } = serve(platform);
    const browser = await signIn();
    expect((await visit(browser, `${appOrigin}/me`)).status).toBe(200);
    const gatewayToken = [...kept.values()][0] ?? '';

    const crossSite = await visit(browser, `${appOrigin}/auth/logout`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect((await visit(browser, `${appOrigin}/me`)).status).toBe(200);

    const out = await visit(browser, `${appOrigin}/auth/logout`, {
      method: 'POST',
      headers: { origin: appOrigin },
    });
    expect(out.status).toBe(303);
    const endSession = new URL(out.location ?? '');
    expect(endSession.origin).toBe(new URL(t.provider.issuer).origin);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(
      'http://localhost:8080/v1/auth/logged-out',
    );
    expect(out.setCookies).toContain(
      'platform_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    );
    expect(kept.size).toBe(0);
    expect(await platform.introspect(gatewayToken)).toEqual({ state: 'inactive' });
    expect((await visit(browser, `${appOrigin}/me`)).status).toBe(302);
  });

  it('drops the platform session when the gateway session ended elsewhere', async () => {
    const { platform } = sdk();
    const { kept } = serve(platform);
    const browser = await signIn();
    const gatewayToken = [...kept.values()][0] ?? '';
    // Ended at the gateway by someone else (another tab's logout, an admin).
    const other = sdk().platform;
    expect((await other.logout({ gatewayToken, origin: appOrigin })).logoutUrl).not.toBeNull();

    const visitAfter = await visit(browser, `${appOrigin}/me`);
    expect(visitAfter.status).toBe(302);
    expect(visitAfter.setCookies).toContain(
      'platform_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    );
    expect(kept.size).toBe(0);
  });
});

describe("the user's own sessions (GET and DELETE /v1/account/sessions)", () => {
  it('lists the live sessions with the forwarded token, newest first, this one marked current', async () => {
    const { platform } = sdk();
    const older = await exchangeDirectly(platform);
    const newer = await exchangeDirectly(platform);
    const sessions = await platform.listSessions(newer.session.gatewayToken);
    const ids = sessions.map((session) => session.id);
    expect(ids.indexOf(newer.session.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(newer.session.id)).toBeLessThan(ids.indexOf(older.session.id));
    expect(sessions.filter((session) => session.current).map((session) => session.id)).toEqual([
      newer.session.id,
    ]);
    expect(sessions.find((session) => session.id === older.session.id)).toEqual({
      id: older.session.id,
      platform: { key: 'SDK_APP', name: 'SDK app' },
      environment: older.environment,
      createdAt: expect.any(String),
      expiresAt: older.session.expiresAt,
      current: false,
    });
  });

  it('ends the other sessions from the platform origin; their cached introspection goes at once', async () => {
    const { platform, calls } = sdk();
    const other = await exchangeDirectly(platform);
    const kept = await exchangeDirectly(platform);
    expect((await platform.introspect(other.session.gatewayToken)).state).toBe('active');
    const { revokedSessions } = await platform.endOtherSessions({
      gatewayToken: kept.session.gatewayToken,
      origin: appOrigin,
    });
    // user-1's sessions of earlier tests that are still live end too.
    expect(revokedSessions).toBeGreaterThanOrEqual(1);
    const asked = calls.count('/v1/auth/introspect');
    expect(await platform.introspect(other.session.gatewayToken)).toEqual({ state: 'inactive' });
    expect(calls.count('/v1/auth/introspect')).toBe(asked + 1);
    expect((await platform.introspect(kept.session.gatewayToken)).state).toBe('active');
    const left = await platform.listSessions(kept.session.gatewayToken);
    expect(left.map((session) => [session.id, session.current])).toEqual([[kept.session.id, true]]);
  });

  it('is refused from an Origin off the allowlist (403) and for an ended session (401)', async () => {
    const { platform } = sdk();
    const { session } = await exchangeDirectly(platform);
    const foreign = await failureOf(
      platform.endOtherSessions({
        gatewayToken: session.gatewayToken,
        origin: 'https://evil.example',
      }),
    );
    expect(foreign).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    await platform.logout({ gatewayToken: session.gatewayToken, origin: appOrigin });
    expect(await failureOf(platform.listSessions(session.gatewayToken))).toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
    });
  });
});

describe('when the gateway is unavailable (spec 4.5)', () => {
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: t.gateway.port });
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('answers unavailable and 503 without dropping the platform session', async () => {
    const gatewayUrl = `http://localhost:${proxy.port}`;
    const { platform, calls } = sdk({ gatewayUrl });
    const { kept } = serve(platform);
    const browser = await signIn(gatewayUrl);
    const gatewayToken = [...kept.values()][0] ?? '';

    await proxy.cut();
    const page = await visit(browser, `${appOrigin}/me`);
    expect(page.status).toBe(503);
    expect(page.setCookies).toEqual([]);
    expect(kept.size).toBe(1);
    expect(await platform.introspect(gatewayToken)).toEqual({ state: 'unavailable' });

    const logout = await visit(browser, `${appOrigin}/auth/logout`, {
      method: 'POST',
      headers: { origin: appOrigin },
    });
    expect(logout.status).toBe(503);
    expect(kept.size).toBe(1);

    await proxy.restore();
    expect((await visit(browser, `${appOrigin}/me`)).status).toBe(200);
    // The unavailable answers were not cached: each visit asked the gateway.
    expect(calls.count('/v1/auth/introspect')).toBe(3);
  });

  it('keeps the pending login when the exchange gets no answer, so a reload of the callback signs in', async () => {
    const gatewayUrl = `http://localhost:${proxy.port}`;
    const { platform, calls } = sdk({ gatewayUrl });
    serve(platform);
    const browser = newBrowser();
    const callbackUrl = await reachPlatformCallback(browser, gatewayUrl);

    await proxy.cut();
    const unavailable = await visit(browser, callbackUrl);
    expect(unavailable.status).toBe(503);
    expect(unavailable.text).toBe('Sign-in is temporarily unavailable. Please try again.');
    expect(unavailable.setCookies).toEqual([]);
    // The SDK tried the exchange again before it gave up (exchange-handoff.ts: three tries).
    expect(calls.count('/v1/auth/exchange')).toBe(3);

    await proxy.restore();
    const reloaded = await visit(browser, callbackUrl);
    expect(reloaded.status).toBe(302);
    expect(reloaded.location).toBe(`${appOrigin}/me`);
    expect((await visit(browser, `${appOrigin}/`)).text).toBe('user-1');
  });

  it('answers unavailable after timeoutMs and does not cache the time-out', async () => {
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const { platform, calls } = sdk({ gatewayUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 });
      // The server never answers: only the SDK's time-out ends the call.
      expect(await platform.introspect('some-token')).toEqual({ state: 'unavailable' });
      expect(await platform.introspect('some-token')).toEqual({ state: 'unavailable' });
      expect(calls.count('/v1/auth/introspect')).toBe(2);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
