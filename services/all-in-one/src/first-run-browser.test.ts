import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDemoPlatform, type RunningDemoPlatform } from '@gateway/demo-platform';
import {
  launchTestBrowser,
  unusedLocalPort,
  watchPageProblems,
  type ChromiumContext,
  type ChromiumPage,
  type TestChromium,
} from '@gateway/testkit';
import { startEmbeddedProcess, type EmbeddedProcess } from './testing/embedded-process.js';

// The browser end-to-end suite in a real browser (Chromium) against the README's first
// command: sign in, sign up, the onboarding page (global and central), logout through the
// identity end-session and back, single logout from the identity service's account page, a second platform on another identity environment, a reused
// handoff code replayed in another browser and a forged callback without the pending cookie.
// A real browser also holds the pages to what fetch does not check: the
// Content-Security-Policy, the Origin a form POST carries, and cookies shared by localhost's
// ports. Failures leave a screenshot and a log in the folder launchTestBrowser prints
// (test-artifacts/screenshots, kept by CI).

let embedded: EmbeddedProcess;
let demo: string;
let gateway: string;
let browser: TestChromium;
beforeAll(async () => {
  embedded = await startEmbeddedProcess();
  ({ demo, gateway } = embedded);
  browser = await launchTestBrowser();
});

afterAll(async () => {
  await browser?.close();
  await embedded?.stop();
});

describe('the demo platform in Chromium', () => {
  it('signs a demo user in to the signed-in page and out again', async () => {
    await browser.withPage('first-run-sign-in', async (page) => {
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });
      await page.goto(`${demo}/`);
      await page.click('text=Sign in');
      await page.fill('input[name="email"]', 'alice@example.com');
      await page.fill('input[name="password"]', 'alice-password');
      await page.click('button[type="submit"]');
      await page.waitForURL(`${demo}/me`);
      const main = await page.locator('main').innerText();
      expect(main).toContain('You are signed in as alice@example.com');
      expect(main).toContain('PROD');
      expect(main).toContain('COMPLETE');
      // The stylesheet loaded under the policy: the buttons have their colour.
      // (A string: this project compiles without the DOM library.)
      const buttonColour = await page.evaluate<string>(
        "getComputedStyle(document.querySelector('.button')).borderTopColor",
      );
      expect(buttonColour).toBe('rgb(74, 108, 247)');

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(`${demo}/`);
      await page.goto(`${demo}/me`);
      // Signed out of the platform and of the identity service: the sign-in page again.
      await page.locator('input[name="password"]').waitFor();
      expect(blocked).toEqual([]);
    });
  });

  it("signs out at the identity service's account page: the demo platform's next page is signed out (back-channel logout)", async () => {
    await browser.withPage('single-logout', async (page) => {
      await page.goto(`${demo}/`);
      await page.click('text=Sign in');
      await signInOnIdentity(page, 'alice@example.com', 'alice-password');
      await page.waitForURL(`${demo}/me`);
      expect(await page.locator('main').innerText()).toContain(
        'You are signed in as alice@example.com',
      );

      // The identity service's account page, in the same browser: the identity session.
      await page.goto(`${gateway}/account`);
      expect(await page.locator('main').innerText()).toContain('alice@example.com');
      await page.click('text=Sign out');
      // The end-session endpoint's confirmation, then the provider's signed-out page: by
      // then it has posted its logout token to the gateway.
      await page.click('button:has-text("Sign out")');
      await page.locator('text=You are signed out.').waitFor();

      // The demo platform's next page introspects its gateway session: ended, so the platform
      // session ends and the browser is sent to sign in again, at the identity service.
      await page.goto(`${demo}/me`);
      await page.locator('input[name="password"]').waitFor();
      expect(page.url().startsWith(`${demo}/`)).toBe(false);
    });
    const records = await admin('GET', '/v1/audit-records?kind=auth.backchannel_logout');
    expect(records.status).toBe(200);
    const { items } = (await records.json()) as { items: { details: Record<string, unknown> }[] };
    expect(items.some((item) => Number(item.details.revokedGatewaySessions) > 0)).toBe(true);
  });

  it('signs a newcomer up through "Create an account" and lands on the signed-in page', async () => {
    await browser.withPage('first-run-sign-up', async (page) => {
      await page.goto(`${demo}/`);
      await page.click('text=Create an account');
      // defaultScreen=up: the identity service opens its registration page, not sign-in.
      await page.waitForURL((url) => url.pathname.startsWith('/api/auth/env/PROD/'));
      await page.locator('text=Password, again').waitFor();
      expect(await page.locator('input[type="password"]').count()).toBe(2);
      const email = `newcomer-${Date.now()}@example.com`;
      await page.fill('input[name="email"]', email);
      await page.fill('input[name="name"]', 'New Comer');
      await page.fill('input[name="password"]', 'a-long-enough-password');
      await page.fill('input[name="passwordConfirmation"]', 'a-long-enough-password');
      await page.click('button[type="submit"]');
      await page.waitForURL(`${demo}/me`);
      expect(await page.locator('main').innerText()).toContain(`You are signed in as ${email}`);
    });
  });

  it('stops a sign-in at the onboarding page for a global field, then a central platform field', async () => {
    const global = await admin('POST', '/v1/admin/onboarding/global-fields', {
      profileFieldKey: 'nickname',
      label: 'Nickname',
      fieldType: 'TEXT',
      required: true,
    });
    expect(global.status).toBe(201);
    const field = await admin('POST', '/v1/platforms/DEMO/onboarding/fields', {
      fieldKey: 'homeCountry',
      label: 'Home country',
      fieldType: 'COUNTRY',
      source: 'CUSTOM_FIELD',
      required: true,
    });
    expect(field.status).toBe(201);
    try {
      await browser.withPage('first-run-onboarding', async (page) => {
        await page.goto(`${demo}/`);
        await page.click('text=Sign in');
        await signInOnIdentity(page, 'bob@example.com', 'bob-password');
        await page.waitForURL(
          (url) =>
            url.pathname === '/env/PROD/onboarding' && url.searchParams.get('scope') === 'global',
        );
        await page.fill('#field-nickname', 'Bobby');
        await page.click('#onboarding-submit');
        await page.waitForURL(
          (url) => url.pathname === '/env/PROD/onboarding' && !url.searchParams.has('scope'),
        );
        await page.fill('#field-homeCountry', ' de ');
        await page.click('#onboarding-submit');
        await page.waitForURL(`${demo}/me`);
        const main = await page.locator('main').innerText();
        expect(main).toContain('You are signed in as bob@example.com');
        expect(main).toContain('COMPLETE');
        expect(main).not.toContain('homeCountry');
      });
    } finally {
      await admin('DELETE', '/v1/admin/onboarding/global-fields/nickname');
      await admin('DELETE', '/v1/platforms/DEMO/onboarding/fields/homeCountry');
    }
  });

  it('signs in to a second platform bound to another identity environment (PARTNER)', async () => {
    const secrets = await readSecrets();
    const environment = await admin('POST', '/v1/identity-environments', {
      environmentKey: 'PARTNER',
      displayName: 'Partner',
      tier: 'development',
      issuer: `${gateway}/api/auth/env/PARTNER`,
      oidcClientId: 'gateway',
      oidcClientSecret: secrets.DEV_IDENTITY_GATEWAY_CLIENT_SECRET,
    });
    expect(environment.status).toBe(201);
    const partnerPort = await unusedLocalPort();
    const partnerOrigin = `http://localhost:${partnerPort}`;
    const created = await admin('POST', '/v1/platforms', {
      platformKey: 'PARTNER_APP',
      displayName: 'Partner app',
      identityEnvironmentKey: 'PARTNER',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: `${partnerOrigin}/`,
          callbackUrl: `${partnerOrigin}/auth/callback`,
          isDefault: true,
        },
      ],
    });
    expect(created.status).toBe(201);
    const [key] = (
      (await created.json()) as {
        credentials: { clientId: string; clientSecret: string }[];
      }
    ).credentials;
    if (key === undefined) throw new Error('no key issued');
    const partner: RunningDemoPlatform = await startDemoPlatform({
      port: partnerPort,
      gatewayUrl: gateway,
      platformKey: 'PARTNER_APP',
      bffKey: key,
      publicOrigin: partnerOrigin,
      expectedEnvironment: 'PARTNER',
      log: () => undefined,
    });
    try {
      await browser.withPage('partner-sign-in', async (page) => {
        await page.goto(`${partnerOrigin}/`);
        await page.click('text=Sign in');
        // The partner environment's own issuer, with its own accounts.
        await page.waitForURL((url) => url.pathname.startsWith('/api/auth/env/PARTNER/'));
        await signInOnIdentity(page, 'alice@example.com', 'alice-partner-password');
        await page.waitForURL(`${partnerOrigin}/me`);
        const main = await page.locator('main').innerText();
        expect(main).toContain('You are signed in as alice@example.com');
        expect(main).toContain('PARTNER');
      });
    } finally {
      await partner.close();
    }
  });

  it('refuses a reused handoff code: the replaying browser is sent to sign in again, not signed in', async () => {
    let callbackUrl: string | undefined;
    await browser.withPage('reused-code-first-use', async (page, context) => {
      page.on('request', (request) => {
        if (request.url().startsWith(`${demo}/auth/callback`)) callbackUrl = request.url();
      });
      await page.goto(`${demo}/`);
      await page.click('text=Sign in');
      await signInOnIdentity(page, 'alice@example.com', 'alice-password');
      await page.waitForURL(`${demo}/me`);
      // What expectSignedOut looks for: a signed-in browser holds the platform's session.
      const names = (await context.cookies(demo)).map((cookie) => cookie.name);
      expect(names).toContain(SESSION_COOKIE);
    });
    expect(callbackUrl).toMatch(/code=handoff_/);
    await browser.withPage('reused-code-replay', async (page, context) => {
      // Another browser starts a login of its own at the demo (the login-CSRF check passes),
      // then replays alice's callback URL while her session is still live. The code is used
      // (spec 3.2: used → 404): the demo sends this browser to sign in again.
      await page.goto(`${demo}/`);
      await page.click('text=Sign in');
      await page.locator('input[name="password"]').waitFor();
      const names = (await context.cookies(demo)).map((cookie) => cookie.name);
      expect(names).toContain(PENDING_COOKIE);
      const replay = await page.goto(callbackUrl ?? '');
      expect(replay?.status()).toBe(200);
      await page.locator('input[name="password"]').waitFor();
      expect(page.url().startsWith(`${demo}/`)).toBe(false);
      await expectSignedOut(context);
    });
  });

  it('refuses a forged callback without the pending cookie and leaves its code unspent', async () => {
    await browser.withPage('forged-callback', async (page, context) => {
      // The gateway's start, called directly: the platform set no pending cookie.
      await page.goto(
        `${gateway}/v1/auth/start?platformKey=DEMO&returnTo=${encodeURIComponent(`${demo}/me`)}`,
      );
      const landed = page.waitForResponse((response) =>
        response.url().startsWith(`${demo}/auth/callback`),
      );
      await signInOnIdentity(page, 'alice@example.com', 'alice-password');
      const forged = await landed;
      expect(forged.status()).toBe(403);
      const code = new URL(forged.url()).searchParams.get('code') ?? '';
      expect(code).toMatch(/^handoff_/);
      await expectSignedOut(context);

      // The platform refused before exchanging: the code is still redeemable.
      const first = await exchangeWithDemoKey(code);
      expect(first.status).toBe(200);
      const answer = (await first.json()) as {
        platform: { key: string };
        user: { issuer: string };
      };
      expect(answer.platform.key).toBe('DEMO');
      expect(answer.user.issuer).toBe(`${gateway}/api/auth/env/PROD`);
      // Spec 3.2: a used code answers 404, also to the key that redeemed it.
      expect((await exchangeWithDemoKey(code)).status).toBe(404);
    });
  });
});

describe("a newcomer's first visits in Chromium", () => {
  it('visits the demo platform with no error in the console: it has an icon', async () => {
    await browser.withPage('first-visit-demo', async (page) => {
      const problems = watchPageProblems(page);
      await page.goto(`${demo}/`);
      await page.getByText('Sign in').first().waitFor();
      // The icon the page names, and the one a browser asks for when a page names none.
      const named = (await page.locator('link[rel="icon"]').getAttribute('href')) ?? '';
      expect(named).not.toBe('');
      for (const icon of [named, '/favicon.ico']) {
        const answer = await page.goto(new URL(icon, demo).href);
        expect(answer?.status()).toBe(200);
        expect(answer?.headers()['content-type']).toMatch(/^image\/svg\+xml/);
      }
      await page.goto(`${demo}/`);
      await page.getByText('Sign in').first().waitFor();
      expect(problems).toEqual([]);
    });
  });

  it('reads a refused start in words and follows its link back to the platform', async () => {
    await browser.withPage('first-visit-bad-start', async (page) => {
      await page.goto(`${gateway}/v1/auth/start?platformKey=DEMO`);
      const main = page.locator('main');
      await main.getByRole('heading', { name: 'This request is not valid' }).waitFor();
      expect(await main.innerText()).toContain('The parameter returnTo is missing.');
      expect(await main.innerText()).not.toContain('Go to your account');
      await main.getByRole('link', { name: 'Demo platform' }).click();
      await page.waitForURL((url) => url.origin === demo && url.pathname === '/');
      await page.getByText('Sign in').first().waitFor();
    });
  });

  it('reads a start that names no platform in words, with advice and no dead link', async () => {
    await browser.withPage('first-visit-empty-start', async (page) => {
      await page.goto(`${gateway}/v1/auth/start`);
      const main = page.locator('main');
      await main.getByRole('heading', { name: 'This request is not valid' }).waitFor();
      const text = await main.innerText();
      expect(text).toContain('The parameter platformKey is missing.');
      expect(text).toContain('The parameter returnTo is missing.');
      expect(text).toContain('Return to the site you came from and start again from there.');
      expect(await main.getByRole('link').count()).toBe(0);
    });
  });
});

/** The SDK's default login-CSRF cookie (spec 4.4) and platform session cookie. */
const PENDING_COOKIE = 'gw_login_pending';
const SESSION_COOKIE = 'platform_session';

async function signInOnIdentity(page: ChromiumPage, email: string, password: string) {
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
}

/** The platform created no session for this browser (its session cookie is absent). */
async function expectSignedOut(context: ChromiumContext) {
  const names = (await context.cookies(demo)).map((cookie) => cookie.name);
  expect(names).not.toContain(SESSION_COOKIE);
}

const readSecrets = () => embedded.secrets();

/** The server-to-server exchange with the demo platform's BFF key, as its backend sends it. */
async function exchangeWithDemoKey(code: string): Promise<Response> {
  const key = JSON.parse(await readFile(join(embedded.dataDir, 'demo-platform.json'), 'utf8')) as {
    clientId: string;
    clientSecret: string;
  };
  return fetch(`${gateway}/v1/auth/exchange`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ code }),
  });
}
const admin = (method: string, path: string, body?: unknown) => embedded.admin(method, path, body);
