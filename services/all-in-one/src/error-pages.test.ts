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
      expect(page.text).toContain(`<a href="${ACCOUNT_CENTER}">Go to your account</a>`);

      for (const accept of ['application/json', '*/*']) {
        const json = await browse(path, { ...lane, accept });
        expect(json.status).toBe(status);
        expect(json.type).toBe('application/json; charset=utf-8');
        expect(JSON.parse(json.text)).toMatchObject({ code });
      }
    },
  );
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
