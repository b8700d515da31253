import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// The whole gateway, its real services behind the edge: a browser that navigates to a
// login-flow endpoint and is refused reads the refusal as a page; a platform backend or
// script that asks for JSON (or for anything) gets the error body of spec 7, with the same
// status. Both of the edge's paths: requests without an Origin take the fast lane, requests
// with an allowlisted Origin go through Express.

const CONSOLE_ORIGIN = 'https://console.example.com';
const ACCOUNT_CENTER = 'https://account.example.com/account';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const UNKNOWN_TRANSACTION = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';

let t: GatewayUnderTest;
beforeAll(async () => {
  t = await startGatewayUnderTest({
    CORS_ORIGINS: CONSOLE_ORIGIN,
    ACCOUNT_CENTER_URL: ACCOUNT_CENTER,
  });
});
afterAll(() => t.close());

type Answer = { status: number; type: string | null; text: string };

async function browse(path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${t.gateway.url}${path}`, { headers, redirect: 'manual' });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

const refusals = [
  [
    'start for an unknown platform',
    '/v1/auth/start?platformKey=NOPE&returnTo=%2F',
    404,
    'NOT_FOUND',
  ],
  ['a callback with an unknown state', '/v1/auth/callback?code=c&state=unknown', 404, 'NOT_FOUND'],
  [
    'a cancelled sign-in',
    '/v1/auth/callback?error=access_denied&state=unknown',
    400,
    'VALIDATION_ERROR',
  ],
  [
    'resume without a session',
    `/v1/auth/resume?transaction=${UNKNOWN_TRANSACTION}`,
    401,
    'UNAUTHORIZED',
  ],
  ['logged-out with an unknown parameter', '/v1/auth/logged-out?x=1', 400, 'VALIDATION_ERROR'],
] as const;

const lanes = [
  ['without an Origin', {}],
  ['with an allowlisted Origin', { origin: CONSOLE_ORIGIN }],
] as const;

describe.each(lanes)('login-flow refusals %s', (_lane, lane) => {
  it.each(refusals)(
    '%s: a page for a browser, JSON for others',
    async (_name, path, status, code) => {
      const page = await browse(path, { ...lane, accept: BROWSER_ACCEPT });
      expect(page.status).toBe(status);
      expect(page.type).toBe('text/html; charset=utf-8');
      expect(page.text).toContain(`<code>${code}</code>`);
      if (path.startsWith('/v1/auth/start')) {
        // Its visitor is usually signed out: the account page would be a dead end.
        expect(page.text).not.toContain(ACCOUNT_CENTER);
      } else {
        expect(page.text).toContain(`<a href="${ACCOUNT_CENTER}">Go to your account</a>`);
      }

      for (const accept of ['application/json', '*/*']) {
        const json = await browse(path, { ...lane, accept });
        expect(json.status).toBe(status);
        expect(json.type).toBe('application/json; charset=utf-8');
        expect(JSON.parse(json.text)).toMatchObject({ code });
      }
    },
  );
});

describe('a refused start (spec 4.1), for a signed-out visitor', () => {
  const pair = (returnUrl: string, isDefault: boolean) => ({
    label: isDefault ? 'web' : 'app',
    returnUrl,
    callbackUrl: 'http://localhost:3000/auth/callback',
    isDefault,
  });

  beforeAll(async () => {
    for (const [platformKey, displayName] of [
      ['SHOP', 'Shop'],
      ['CLOSED', 'Closed shop'],
    ] as const) {
      const created = await t.call('POST', '/v1/platforms', {
        body: {
          platformKey,
          displayName,
          redirectPairs: [
            pair('http://localhost:3000/app', false),
            pair('http://localhost:3000/', true),
          ],
        },
      });
      expect(created.status).toBe(201);
    }
    expect((await t.call('DELETE', '/v1/platforms/CLOSED')).status).toBe(200);
  });

  it('says what is missing in words, with advice and no link, when it names no platform', async () => {
    const page = await browse('/v1/auth/start', { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(400);
    expect(page.text).toContain('The parameter <code>platformKey</code> is missing.');
    expect(page.text).toContain('The parameter <code>returnTo</code> is missing.');
    expect(page.text).toContain('Return to the site you came from and start again from there.');
    expect(page.text).not.toContain('<a ');
  });

  it("leads back to a known active platform's registered home: its default pair's return URL, as stored", async () => {
    const page = await browse(
      '/v1/auth/start?platformKey=SHOP&returnTo=https%3A%2F%2Felsewhere.example',
      {
        accept: BROWSER_ACCEPT,
      },
    );
    expect(page.status).toBe(403);
    expect(page.text).toContain(
      'Go back to <a href="http://localhost:3000">Shop</a> and sign in again from there.',
    );
    expect(page.text).not.toContain(ACCOUNT_CENTER);
    const missing = await browse('/v1/auth/start?platformKey=SHOP', { accept: BROWSER_ACCEPT });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('The parameter <code>returnTo</code> is missing.');
    expect(missing.text).toContain('<a href="http://localhost:3000">Shop</a>');
  });

  it.each([
    ['an unknown platform', 'NOPE'],
    ['an inactive platform', 'CLOSED'],
  ])('offers advice and no link for %s', async (_name, platformKey) => {
    const page = await browse(`/v1/auth/start?platformKey=${platformKey}&returnTo=%2F`, {
      accept: BROWSER_ACCEPT,
    });
    expect(page.status).toBe(404);
    expect(page.text).toContain('Unknown or inactive platform.');
    expect(page.text).toContain('Return to the site you came from');
    expect(page.text).not.toContain('<a ');
  });

  it('keeps the JSON answers as they were', async () => {
    const missing = await browse('/v1/auth/start', { accept: 'application/json' });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Invalid request query.',
      details: {
        issues: [
          {
            location: 'query',
            path: 'platformKey',
            message: 'Invalid input: expected string, received undefined',
          },
          {
            location: 'query',
            path: 'returnTo',
            message: 'Invalid input: expected string, received undefined',
          },
        ],
      },
    });
    const unknown = await browse('/v1/auth/start?platformKey=NOPE&returnTo=%2F', {
      accept: 'application/json',
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toEqual({
      code: 'NOT_FOUND',
      message: 'Unknown or inactive platform.',
    });
  });
});

describe('paths the gateway does not serve', () => {
  it('answers a browser with a 404 page and others with the JSON 404', async () => {
    const page = await browse('/no/such/page', { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(404);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<code>NOT_FOUND</code>');
    const json = await browse('/no/such/page', { accept: 'application/json' });
    expect(json.status).toBe(404);
    expect(JSON.parse(json.text)).toEqual({ code: 'NOT_FOUND', message: 'No such route.' });
  });

  it('answers /favicon.ico with 204', async () => {
    const icon = await browse('/favicon.ico', { accept: 'image/*' });
    expect(icon.status).toBe(204);
    expect(icon.text).toBe('');
  });
});
