import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCookieJar } from '@gateway/testkit';
import { startEmbeddedProcess, type EmbeddedProcess } from './testing/embedded-process.js';

// The embedded default as `pnpm start` runs it, with the development identity service on
// the gateway's origin: an admin registers a platform with a token from the identity
// service, and a user signs in through its real sign-in page.
let embedded: EmbeddedProcess;
let origin: string;

beforeAll(async () => {
  embedded = await startEmbeddedProcess();
  origin = embedded.gateway;
});

afterAll(async () => {
  await embedded?.stop();
});

const adminToken = () => embedded.adminToken('platforms:admin');

describe('the embedded default', () => {
  it('signs a demo user in through the development identity service and hands off to the platform', async () => {
    const created = await fetch(`${origin}/v1/platforms`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await adminToken()}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        platformKey: 'JOURNEY',
        displayName: 'Journey',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: 'http://localhost:3000/',
            callbackUrl: 'http://localhost:3000/auth/callback',
            isDefault: true,
          },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const [key] = (
      (await created.json()) as { credentials: { clientId: string; clientSecret: string }[] }
    ).credentials;

    // A browser: follow redirects on the gateway's origin, keep cookies, fill the sign-in form.
    const jar = createCookieJar();
    const visit = async (url: string, form?: Record<string, string>) => {
      const cookie = jar.headerFor(url);
      const response = await fetch(url, {
        method: form === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          ...(cookie === undefined ? {} : { cookie }),
          ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(form === undefined ? {} : { body: new URLSearchParams(form) }),
      });
      jar.store(url, response);
      return response;
    };
    let url = `${origin}/v1/auth/start?platformKey=JOURNEY&returnTo=%2F`;
    let response = await visit(url);
    let submitted = false;
    for (let hop = 0; hop < 15; hop += 1) {
      const location = response.headers.get('location');
      if (location !== null && response.status >= 300 && response.status < 400) {
        const next = new URL(location, url);
        if (next.origin === 'http://localhost:3000') {
          url = next.href;
          break;
        }
        url = next.href;
        response = await visit(url);
        continue;
      }
      const page = await response.text();
      expect(submitted).toBe(false);
      const action = /<form[^>]*\saction="([^"]*login[^"]*)"/.exec(page)?.[1];
      if (action === undefined) throw new Error(`no sign-in form at ${url}:\n${page}`);
      const hidden = Object.fromEntries(
        [...page.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]*)"[^>]*value="([^"]*)"/g)].map(
          (m) => [m[1], m[2]],
        ),
      );
      url = new URL(action.replace(/&amp;/g, '&'), url).href;
      response = await visit(url, {
        ...hidden,
        email: 'alice@example.com',
        password: 'alice-password',
      });
      submitted = true;
    }
    const landed = new URL(url);
    expect(`${landed.origin}${landed.pathname}`).toBe('http://localhost:3000/auth/callback');
    const code = landed.searchParams.get('code');
    expect(code).toMatch(/^handoff_/);

    const exchanged = await fetch(`${origin}/v1/auth/exchange`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${key?.clientId}:${key?.clientSecret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ code }),
    });
    expect(exchanged.status).toBe(200);
    const body = (await exchanged.json()) as {
      session: { gatewayToken: string };
      user: { issuer: string };
      environment: { key: string };
    };
    expect(body.user.issuer).toBe(`${origin}/api/auth/env/PROD`);
    expect(body.environment.key).toBe('PROD');

    const basic = `Basic ${Buffer.from(`${key?.clientId}:${key?.clientSecret}`).toString('base64')}`;
    const introspect = async () =>
      (
        await fetch(`${origin}/v1/auth/introspect`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/json' },
          body: JSON.stringify({ token: body.session.gatewayToken }),
        })
      ).json();
    expect(await introspect()).toMatchObject({ active: true, platformKey: 'JOURNEY' });

    // Logout through the development identity service's end-session page and back.
    const logout = await fetch(`${origin}/v1/auth/logout`, {
      method: 'POST',
      headers: { cookie: jar.headerFor(`${origin}/`) ?? '', origin },
    });
    expect(logout.status).toBe(200);
    const { logoutUrl } = (await logout.json()) as { logoutUrl: string };
    expect(logoutUrl.startsWith(`${origin}/api/auth/env/PROD/`)).toBe(true);
    url = logoutUrl;
    response = await visit(url);
    for (let hop = 0; hop < 10; hop += 1) {
      const location = response.headers.get('location');
      if (location !== null && response.status >= 300 && response.status < 400) {
        url = new URL(location, url).href;
        if (new URL(url).origin === 'http://localhost:3000') break;
        response = await visit(url);
        continue;
      }
      // The sign-out confirmation: a form with its xsrf token and `logout=yes`.
      const page = await response.text();
      const action = /<form[^>]*\saction="([^"]*)"/.exec(page)?.[1];
      if (action === undefined) throw new Error(`no sign-out form at ${url}:\n${page}`);
      const hidden = Object.fromEntries(
        [...page.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]*)"[^>]*value="([^"]*)"/g)].map(
          (m) => [m[1], m[2]],
        ),
      );
      url = new URL(action.replace(/&amp;/g, '&'), url).href;
      response = await visit(url, { ...hidden, logout: 'yes' });
    }
    // The gateway's logged-out endpoint sent the browser to the platform's default return URL.
    expect(url).toBe('http://localhost:3000/');
    expect(await introspect()).toEqual({ active: false });
  });
});
