import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDevIdentityService } from '../dev-identity-service.js';
import {
  startDevIdentity,
  testAccounts,
  testAudience,
  testEnvironments,
  type RunningDevIdentity,
} from '../testing/dev-identity-harness.js';

const transactionId = '3f0e8a4c-6b1d-4c2e-9a57-0d6f1b2c3d4e';
const pagePath = (query: string) => `/env/PROD/onboarding?${query}`;
const validQuery = `platform=SHOP_1&resume=${transactionId}`;

let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity();
});
afterAll(() => identity.close());

const get = (path: string, init?: RequestInit) => fetch(`${identity.origin}${path}`, init);
const scriptPathOf = (page: string) =>
  /<script type="module" src="([^"]+)"><\/script>/.exec(page)?.[1] ?? '';

describe('GET /env/<KEY>/onboarding (spec 4.2 step 8)', () => {
  it('serves the page shell with the parameters for the client and a strict CSP', async () => {
    const response = await get(pagePath(validQuery));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'none'",
        "script-src 'self'",
        // The gateway base URL defaults to publicOrigin (the embedded default).
        `connect-src 'self' ${identity.origin}`,
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
      ]),
    );
    expect(csp).not.toContain('unsafe-inline');
    const page = await response.text();
    expect(page).toContain(`data-gateway="${identity.origin}"`);
    expect(page).toContain('data-platform="SHOP_1"');
    expect(page).toContain(`data-resume="${transactionId}"`);
    expect(page).toContain('data-scope="platform"');
    expect(page).toContain('<h1 id="onboarding-title">Complete your sign-up</h1>');
    expect(page).toContain('Deployment (PROD)');
    // No inline script and no inline event handler: the only script is the bundled module.
    expect(page.match(/<script\b[^>]*>/g)).toEqual([
      expect.stringMatching(/^<script type="module" src="[^"]+">$/),
    ]);
    expect(page).not.toMatch(/\son[a-z]+=/);
    expect(scriptPathOf(page)).toMatch(
      /^\/env\/PROD\/onboarding\/assets\/onboarding-[0-9a-f]{16}\.js$/,
    );
  });

  it('shows the profile step with scope=global', async () => {
    const response = await get(pagePath(`${validQuery}&scope=global`));
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('data-scope="global"');
    expect(page).toContain('<h1 id="onboarding-title">Complete your profile</h1>');
  });

  it.each([
    ['no platform', `resume=${transactionId}`, 'The platform is missing.'],
    [
      'a lower-case platform key',
      `platform=shop&resume=${transactionId}`,
      '"shop" is not a platform key.',
    ],
    ['no resume', 'platform=SHOP_1', 'The sign-in to resume is missing.'],
    [
      'a resume that is not a UUID',
      'platform=SHOP_1&resume=42',
      '"42" is not a sign-in transaction id.',
    ],
    [
      'another scope',
      `${validQuery}&scope=platform`,
      '"platform" is not a scope; only "global" is.',
    ],
    ['a repeated parameter', `${validQuery}&platform=OTHER`, 'may be given only once'],
  ])('answers 400 for %s', async (_case, query, message) => {
    const response = await get(pagePath(query));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toContain('This onboarding link is not valid');
    expect(page).toContain(message.replaceAll('"', '&#34;'));
    expect(page).not.toContain('<script');
  });

  it('escapes what it echoes from the query', async () => {
    const attack = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const response = await get(
      pagePath(`platform=${encodeURIComponent(attack)}&resume=${transactionId}`),
    );
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain(
      '&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;&#60;img src=x onerror=alert(1)&#62;',
    );
  });

  it('answers 404 for an environment that is not configured', async () => {
    const response = await get(`/env/NOPE/onboarding?${validQuery}`);
    expect(response.status).toBe(404);
    const asset = await get('/env/NOPE/onboarding/assets/onboarding-0000000000000000.js');
    expect(asset.status).toBe(404);
  });

  it('answers 405 to other methods', async () => {
    const response = await get(pagePath(validQuery), { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the onboarding script', () => {
  it('is served as an immutable JavaScript module under the page', async () => {
    const page = await (await get(pagePath(validQuery))).text();
    const response = await get(scriptPathOf(page));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const code = await response.text();
    expect(code).toContain('/v1/onboarding/');
    expect(code).toContain('/v1/auth/resume?transaction=');
    // The value rules of @gateway/field-rules, without zod and the definition schemas.
    expect(code).toContain('must be an E.164 phone number');
    expect(code).not.toMatch(/\bnew Function\b|\beval\(|innerHTML/);
    expect(code.length).toBeLessThan(60_000);
  });

  it('answers 404 for another file name (a page of an older process)', async () => {
    const response = await get('/env/PROD/onboarding/assets/onboarding-0000000000000000.js');
    expect(response.status).toBe(404);
  });
});

describe('gatewayBaseUrl', () => {
  it('points the page at a gateway on another origin (split deployment)', async () => {
    const split = await startDevIdentity({ gatewayBaseUrl: 'http://localhost:8080/' });
    try {
      const response = await fetch(`${split.origin}${pagePath(validQuery)}`);
      expect(response.headers.get('content-security-policy')).toContain(
        "connect-src 'self' http://localhost:8080",
      );
      expect(await response.text()).toContain('data-gateway="http://localhost:8080"');
    } finally {
      await split.close();
    }
  });

  it.each([
    ['ftp://gateway.example', /gatewayBaseUrl must be an absolute http\(s\) URL/],
    ['not a url', /gatewayBaseUrl must be an absolute http\(s\) URL/],
    ['https://gateway.example/?x=1', /gatewayBaseUrl must not have credentials, a query/],
  ])('refuses %s', async (gatewayBaseUrl, message) => {
    await expect(
      createDevIdentityService({
        publicOrigin: 'http://localhost:8090',
        environments: testEnvironments,
        accounts: testAccounts,
        audience: testAudience,
        gatewayBaseUrl,
      }),
    ).rejects.toThrow(message);
  });
});
