import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startDemoPlatform, type RunningDemoPlatform } from './start-demo-platform.js';

// The demo platform's pages and its use of the SDK, against a stand-in for the gateway
// (the SDK's `fetch` option): what the browser sees at each step, escaping included. The
// real gateway and identity service are exercised by services/all-in-one's first-run test.

const gatewayUrl = 'http://gateway.test';
const bffKey = { clientId: 'pk_demo_web', clientSecret: 'a-secret-of-the-demo-platform' };
const hostile = '<script>alert(1)</script>';

type GatewayCall = {
  method: string;
  path: string;
  query: string;
  authorization: string | null;
  cookie: string | null;
  body: unknown;
  origin: string | null;
};
let calls: GatewayCall[];
let introspection: 'active' | 'inactive' | 'down' | 'refused';
/** What the account's session list answers, and ending the other sessions. */
let accountSessions: 'listed' | 'down' | 'ended';
let otherSessions: number;
let logoutUrl: string | null;
let issued = 0;
/** The returnTo of the last start, which the gateway gives back in the exchange (spec 4.4). */
let startedReturnTo = 'http://localhost:3000/me';
const logged: string[] = [];

const exchangeBody = {
  session: {
    id: '5b0e8c1e-7f0f-4c1e-9a53-2f8a3c1d0b11',
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    gatewayToken: 'gw-token',
  },
  user: {
    id: '0d6f6a57-8a6e-4a55-a2b4-0d0f8d2c7a10',
    sub: `sub-${hostile}`,
    issuer: 'http://localhost:8080/api/auth/env/PROD',
  },
  platform: { key: 'DEMO' },
  environment: { key: 'PROD', tier: 'development' },
  onboarding: {
    status: 'IN_PROGRESS',
    requirementVersion: 3,
    missingFields: ['favouriteColour', hostile],
    canCompleteCentrally: true,
  },
  profile: { status: 'COMPLETE', missingFields: [] },
  permissions: ['platforms:admin'],
  returnTo: 'http://localhost:3000/me',
};

const fakeGateway: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const headers = new Headers(init?.headers);
  const body: unknown = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
  const method = init?.method ?? 'GET';
  calls.push({
    method,
    path: url.pathname,
    query: url.search,
    authorization: headers.get('authorization'),
    cookie: headers.get('cookie'),
    origin: headers.get('origin'),
    body,
  });
  const json = (status: number, value: unknown) =>
    new Response(JSON.stringify(value), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  switch (url.pathname) {
    case '/v1/auth/exchange':
      // A new gateway token per sign-in, so the SDK's introspection cache starts empty.
      return (body as { code?: string }).code === 'handoff_good'
        ? json(200, {
            ...exchangeBody,
            session: { ...exchangeBody.session, gatewayToken: `gw-token-${(issued += 1)}` },
            returnTo: startedReturnTo,
          })
        : json(404, { code: 'NOT_FOUND', message: 'Unknown handoff code.' });
    case '/v1/auth/introspect':
      if (introspection === 'refused') {
        return json(401, { code: 'UNAUTHORIZED', message: 'Bad platform credentials.' });
      }
      if (introspection === 'down')
        return json(503, { code: 'SERVICE_UNAVAILABLE', message: 'Down.' });
      return json(
        200,
        introspection === 'inactive'
          ? { active: false }
          : {
              active: true,
              sessionId: exchangeBody.session.id,
              expiresAt: exchangeBody.session.expiresAt,
              platformKey: 'DEMO',
              user: {
                id: exchangeBody.user.id,
                issuer: exchangeBody.user.issuer,
                subject: exchangeBody.user.sub,
                email: 'alice@example.com',
                emailVerified: true,
                status: 'active',
              },
              environment: { key: 'PROD', tier: 'development' },
            },
      );
    case '/v1/auth/logout':
      return json(200, { logoutUrl });
    case '/v1/account/sessions':
      if (accountSessions === 'down') {
        return json(503, { code: 'SERVICE_UNAVAILABLE', message: 'Down.' });
      }
      if (accountSessions === 'ended') {
        return json(401, { code: 'UNAUTHORIZED', message: 'Sign in first.' });
      }
      if (method === 'DELETE') {
        const ended = otherSessions;
        otherSessions = 0;
        return json(200, { revokedSessions: ended });
      }
      return json(200, { items: sessionItems() });
    default:
      return json(404, { code: 'NOT_FOUND', message: 'No route.' });
  }
};

/** The current session, then `otherSessions` more: the newest elsewhere, one without a platform. */
function sessionItems() {
  const current = {
    id: exchangeBody.session.id,
    platform: { key: 'DEMO', name: `Demo ${hostile}` },
    environment: { key: 'PROD', tier: 'development' },
    createdAt: '2030-01-01T09:30:00.000Z',
    expiresAt: '2030-01-01T17:30:00.000Z',
    current: true,
  };
  const others = Array.from({ length: otherSessions }, (_, index) => ({
    ...current,
    id: `7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4${index}`,
    platform: index === 0 ? null : { key: 'SHOP', name: 'Shop' },
    createdAt: `2030-01-01T10:0${index}:00.000Z`,
    current: false,
  }));
  return [...others.reverse(), current];
}

let demo: RunningDemoPlatform;
let origin: string;

beforeAll(async () => {
  demo = await startDemoPlatform({
    port: 0,
    gatewayUrl,
    platformKey: 'DEMO',
    bffKey,
    publicOrigin: 'http://localhost:3000',
    fetch: fakeGateway,
    log: (line) => logged.push(line),
  });
  origin = demo.url;
});
afterAll(async () => {
  await demo.close();
});
beforeEach(() => {
  calls = [];
  introspection = 'active';
  logoutUrl = null;
  accountSessions = 'listed';
  otherSessions = 0;
});

/** A browser's cookie store for one host, enough for the platform's own cookies. */
function browser() {
  const cookies = new Map<string, string>();
  return {
    async get(path: string, init: RequestInit = {}) {
      const response = await fetch(`${origin}${path}`, {
        redirect: 'manual',
        ...init,
        headers: {
          ...(init.headers as Record<string, string> | undefined),
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const [name = '', value = ''] = pair.split('=');
        if (/max-age=0/i.test(line)) cookies.delete(name);
        else cookies.set(name, value);
      }
      return response;
    },
    cookies,
  };
}

async function signIn() {
  const b = browser();
  const login = await b.get('/auth/login?returnTo=%2Fme');
  expect(login.status).toBeGreaterThanOrEqual(300);
  expect(login.status).toBeLessThan(400);
  const start = new URL(login.headers.get('location') ?? '');
  startedReturnTo = start.searchParams.get('returnTo') ?? '';
  const callback = await b.get('/auth/callback?code=handoff_good');
  expect(callback.status).toBeGreaterThanOrEqual(300);
  expect(callback.status).toBeLessThan(400);
  return b;
}

describe('the home page', () => {
  it('offers sign-in and sign-up, with no script and a strict policy', async () => {
    const response = await fetch(`${origin}/`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('href="/auth/login?returnTo=%2Fme">Sign in</a>');
    expect(page).toContain('href="/auth/login?returnTo=%2Fme&#38;screen=up">Create an account</a>');
    expect(page).not.toContain('<script');
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toContain('script-src');
    expect(response.headers.get('x-powered-by')).toBeNull();
    // Regression: no-referrer made browsers send `Origin: null` on the logout POST (403).
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
  });

  it('serves its stylesheet and answers unknown paths with a 404 page', async () => {
    const css = await fetch(`${origin}/styles.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    const missing = await fetch(`${origin}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Not found');
  });

  it('names its icon on every page and serves it, at /favicon.ico too, so browsers log no 404', async () => {
    const home = await (await fetch(`${origin}/`)).text();
    expect(home).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml" />');
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const icon = await fetch(`${origin}${path}`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await icon.text()).toMatch(/^<svg /);
    }
  });
});

describe('signing in', () => {
  it('sends "Create an account" to the gateway start with defaultScreen=up', async () => {
    const response = await browser().get('/auth/login?returnTo=%2Fme&screen=up');
    const start = new URL(response.headers.get('location') ?? '');
    expect(`${start.origin}${start.pathname}`).toBe(`${gatewayUrl}/v1/auth/start`);
    expect(start.searchParams.get('platformKey')).toBe('DEMO');
    expect(start.searchParams.get('defaultScreen')).toBe('up');
    expect(response.headers.getSetCookie().join('\n')).toMatch(/HttpOnly/);
  });

  it('sends a signed-out visitor of /me to the login route', async () => {
    const response = await browser().get('/me');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/auth/login?returnTo=%2Fme');
  });

  it('shows the exchange result on /me, every value escaped, the gateway token never', async () => {
    const b = await signIn();
    expect(calls.find((call) => call.path === '/v1/auth/exchange')?.authorization).toBe(
      `Basic ${Buffer.from(`${bffKey.clientId}:${bffKey.clientSecret}`).toString('base64')}`,
    );
    const response = await b.get('/me');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const page = await response.text();
    expect(page).not.toContain('<script');
    expect(page).toContain('sub-&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(page).toContain('alice@example.com');
    expect(page).toMatch(/<dt>key<\/dt>\s*<dd>PROD<\/dd>/);
    expect(page).toMatch(/<dt>tier<\/dt>\s*<dd>development<\/dd>/);
    expect(page).toContain('IN_PROGRESS');
    expect(page).toContain('<code>favouriteColour</code>');
    expect(page).toMatch(/<dt>requirement version<\/dt>\s*<dd>3<\/dd>/);
    expect(page).toContain('<code>platforms:admin</code>');
    expect(page).toContain(exchangeBody.session.expiresAt);
    expect(page).toContain('<form method="post" action="/auth/logout">');
    expect(page).not.toContain('gw-token-');
    // The page names the API operation it shows, not a document outside the repository.
    expect(page).toContain('<code>POST /v1/auth/exchange</code>');
    expect(page).not.toMatch(/\bspec\b/i);
  });

  it('refuses a callback without a login started here', async () => {
    const response = await browser().get('/auth/callback?code=handoff_good');
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(calls.some((call) => call.path === '/v1/auth/exchange')).toBe(false);
    expect(logged.at(-1)).toContain('LOGIN_NOT_PENDING');
  });

  it('answers 503 and keeps the session while the gateway is unavailable', async () => {
    const b = await signIn();
    introspection = 'down';
    expect((await b.get('/me')).status).toBe(503);
    introspection = 'active';
    expect((await b.get('/me')).status).toBe(200);
  });

  it('shows its own error page, not the gateway 401, when the gateway refuses its key', async () => {
    const b = await signIn();
    introspection = 'refused';
    const response = await b.get('/me');
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('Something went wrong');
    expect(logged.at(-1)).toContain('UNAUTHORIZED');
  });

  it('signs the user out of the platform when the gateway session ended', async () => {
    const b = await signIn();
    introspection = 'inactive';
    const response = await b.get('/me');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/auth/login?returnTo=%2Fme');
  });
});

describe('signing out', () => {
  it('logs out at the gateway from the platform origin and sends the browser to the identity sign-out', async () => {
    const b = await signIn();
    logoutUrl = `${gatewayUrl}/api/auth/env/PROD/session/end?state=x`;
    const response = await b.get('/auth/logout', {
      method: 'POST',
      headers: { origin: 'http://localhost:3000' },
    });
    expect(response.status).toBeGreaterThanOrEqual(300);
    expect(response.status).toBeLessThan(400);
    expect(response.headers.get('location')).toBe(logoutUrl);
    expect(calls.find((call) => call.path === '/v1/auth/logout')?.origin).toBe(
      'http://localhost:3000',
    );
    expect((await b.get('/me')).status).toBe(302);
  });
});

describe('the sessions on /me', () => {
  it('lists every session of the user, newest first, this one marked, names escaped', async () => {
    const b = await signIn();
    otherSessions = 2;
    calls = [];
    const page = await (await b.get('/me')).text();
    const list = calls.find((call) => call.path === '/v1/account/sessions');
    // The gateway token goes to the gateway as its cookie, from the server, never to the page.
    expect(list).toMatchObject({ method: 'GET', origin: null, authorization: null });
    expect(list?.cookie).toMatch(/^svc_auth_session=gw-token-\d+$/);
    expect(page).not.toContain('gw-token-');
    const rows = page.match(/<tr[ >][\s\S]*?<\/tr>/g) ?? [];
    expect(rows).toHaveLength(4);
    const [, newest, second, current] = rows.map((row) => row.replace(/\s+/g, ' '));
    expect(newest).toContain('<td>Shop</td>');
    expect(newest).toContain(
      '<time datetime="2030-01-01T10:01:00.000Z">2030-01-01 10:01:00 UTC</time>',
    );
    expect(second).toContain('<span class="muted">none</span>');
    expect(current).toContain('<tr class="current">');
    expect(current).toContain('<td>Demo &#60;script&#62;alert(1)&#60;/script&#62;</td>');
    expect(current).toContain('<td>PROD (development)</td>');
    expect(current).toContain('2030-01-01 17:30:00 UTC');
    expect(current).toContain('<strong>this session</strong>');
    expect(newest).not.toContain('this session');
    expect(page).toContain('<form method="post" action="/me/sign-out-others">');
    expect(page).toContain('Sign out everywhere else</button>');
  });

  it('offers no "Sign out everywhere else" when this is the only session', async () => {
    const page = await (await (await signIn()).get('/me')).text();
    expect(page).toContain('<strong>this session</strong>');
    expect(page).toContain('You are not signed in anywhere else.');
    expect(page).not.toContain('/me/sign-out-others');
  });

  it('still shows the page, with a short note, when the gateway does not list the sessions', async () => {
    const b = await signIn();
    for (const failure of ['down', 'ended'] as const) {
      accountSessions = failure;
      const response = await b.get('/me');
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).toContain('You are signed in as alice@example.com');
      expect(page).toContain('Your sessions cannot be listed right now.');
      expect(page).not.toContain('<table>');
      expect(logged.at(-1)).toMatch(/session list failed: (GATEWAY_UNAVAILABLE|UNAUTHORIZED)/);
    }
  });
});

describe('"Sign out everywhere else"', () => {
  const post = (b: Awaited<ReturnType<typeof signIn>>, headers: Record<string, string>) =>
    b.get('/me/sign-out-others', { method: 'POST', headers });

  it('ends the other sessions at the gateway from the platform origin and shows how many', async () => {
    const b = await signIn();
    otherSessions = 2;
    calls = [];
    const response = await post(b, { origin: 'http://localhost:3000' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/me?ended=2');
    const ended = calls.find((call) => call.method === 'DELETE');
    expect(ended).toMatchObject({
      path: '/v1/account/sessions',
      query: '?except=current',
      origin: 'http://localhost:3000',
      authorization: null,
    });
    expect(ended?.cookie).toMatch(/^svc_auth_session=gw-token-\d+$/);
    const page = await (await b.get('/me?ended=2')).text();
    expect(page).toContain('<p class="notice" role="status">Signed out of 2 other sessions.</p>');
    expect(page).toContain('You are not signed in anywhere else.');
    // Still signed in here: the page asked the gateway about this session again.
    expect(page).toContain('You are signed in as alice@example.com');
  });

  it('says so when there was nothing to end, and ignores a count that is not one', async () => {
    const b = await signIn();
    const response = await post(b, { origin: 'http://localhost:3000' });
    expect(response.headers.get('location')).toBe('/me?ended=0');
    expect(await (await b.get('/me?ended=0')).text()).toContain(
      'There was no other session to sign out of.',
    );
    expect(await (await b.get('/me?ended=%3Cb%3E')).text()).not.toContain('role="status"');
  });

  it('refuses a form sent from another site, before asking the gateway', async () => {
    const b = await signIn();
    otherSessions = 1;
    calls = [];
    const response = await post(b, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('This form was sent from another site.');
    expect(calls.filter((call) => call.path === '/v1/account/sessions')).toEqual([]);
  });

  it('answers 401 to a browser that is not signed in', async () => {
    const response = await browser().get('/me/sign-out-others', {
      method: 'POST',
      headers: { origin: 'http://localhost:3000' },
    });
    expect(response.status).toBe(401);
    expect(calls.filter((call) => call.path === '/v1/account/sessions')).toEqual([]);
  });

  it('answers 503 and keeps the sessions when the gateway is unavailable', async () => {
    const b = await signIn();
    otherSessions = 1;
    accountSessions = 'down';
    const response = await post(b, { origin: 'http://localhost:3000' });
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('Try again in a moment.');
    accountSessions = 'listed';
    expect(await (await b.get('/me')).text()).toContain('Sign out everywhere else');
  });

  it('sends a browser whose own session ended meanwhile to /me, which signs it out', async () => {
    const b = await signIn();
    accountSessions = 'ended';
    const response = await post(b, { origin: 'http://localhost:3000' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/me');
    introspection = 'inactive';
    expect((await b.get('/me')).status).toBe(302);
  });
});
