import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { launchTestBrowser, unusedLocalPort, type TestChromium } from '@gateway/testkit';
import { startEmbeddedProcess, type EmbeddedProcess } from './testing/embedded-process.js';

// The end-to-end proof in a real browser (Chromium): the embedded default as
// `pnpm start` runs it, with the development identity service and its onboarding page on the
// gateway's origin. A user whose required global field is empty signs in, fills it on the
// onboarding page, then fills a central-mode platform field, and lands on the platform's
// callback with a handoff whose exchange reports onboarding COMPLETE.

let embedded: EmbeddedProcess;
let origin: string;
let browser: TestChromium;
/** The platform's callback: a real listener that only shows the browser arrived. */
let platform: Server;
let platformOrigin: string;

beforeAll(async () => {
  embedded = await startEmbeddedProcess();
  origin = embedded.gateway;
  browser = await launchTestBrowser();
  platform = createServer((_req, res) => res.end('platform callback'));
  const platformPort = await unusedLocalPort();
  await new Promise<void>((resolve) => platform.listen(platformPort, '127.0.0.1', resolve));
  platformOrigin = `http://localhost:${platformPort}`;
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => platform?.close(resolve));
  await embedded?.stop();
});

describe('the identity UI onboarding page in Chromium', () => {
  it('stops a sign-in for a required global field, then a central platform field, and hands off COMPLETE', async () => {
    const created = await embedded.admin('POST', '/v1/platforms', {
      platformKey: 'CLUB',
      displayName: 'The Club',
      defaultOnboardingMode: 'central',
      centralOnboardingEnabled: true,
      redirectPairs: [
        {
          label: 'web',
          returnUrl: `${platformOrigin}/`,
          callbackUrl: `${platformOrigin}/auth/callback`,
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
    const global = await embedded.admin('POST', '/v1/admin/onboarding/global-fields', {
      profileFieldKey: 'lastName',
      label: 'Family name',
      fieldType: 'TEXT',
      required: true,
      placeholder: 'As in your passport',
    });
    expect(global.status).toBe(201);
    const field = await embedded.admin('POST', '/v1/platforms/CLUB/onboarding/fields', {
      fieldKey: 'memberSince',
      label: 'Member since',
      fieldType: 'DATE',
      source: 'CUSTOM_FIELD',
      required: true,
      uiConfig: { helpText: 'The day you joined the club' },
    });
    expect(field.status).toBe(201);

    const code = await browser.withPage('onboarding-global-then-central', async (page) => {
      await page.goto(`${origin}/v1/auth/start?platformKey=CLUB&returnTo=%2F`);
      await page.fill('input[name="email"]', 'alice@example.com');
      await page.fill('input[name="password"]', 'alice-password');
      await page.click('button[type="submit"]');

      // The global step (spec 4.2 step 8): `scope=global`.
      await page.waitForURL(
        (url) =>
          url.pathname === '/env/PROD/onboarding' && url.searchParams.get('scope') === 'global',
      );
      const lastName = page.locator('#field-lastName');
      await lastName.waitFor();
      expect(await lastName.getAttribute('placeholder')).toBe('As in your passport');
      await lastName.fill('  Liddell  ');
      await page.click('#onboarding-submit');

      // The platform step (central mode): no `scope`.
      await page.waitForURL(
        (url) => url.pathname === '/env/PROD/onboarding' && !url.searchParams.has('scope'),
      );
      const memberSince = page.locator('#field-memberSince');
      await memberSince.waitFor();
      // A client-side check first: submitting the required field empty shows the shared
      // rules' message next to it.
      await page.click('#onboarding-submit');
      await expect(page.locator('#field-memberSince-error').textContent()).resolves.toMatch(
        /required/i,
      );
      await memberSince.fill('2024-02-29');
      await page.click('#onboarding-submit');

      await page.waitForURL((url) => url.origin === platformOrigin);
      const landed = new URL(page.url());
      expect(landed.pathname).toBe('/auth/callback');
      return landed.searchParams.get('code');
    });
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
      onboarding: unknown;
      profile: unknown;
    };
    expect(body.onboarding).toEqual({
      status: 'COMPLETE',
      requirementVersion: 1,
      missingFields: [],
      canCompleteCentrally: true,
    });
    expect(body.profile).toEqual({ status: 'COMPLETE', missingFields: [] });

    // What the page sent was normalised (text trimmed) and saved to the canonical profile.
    const requirements = await fetch(`${origin}/v1/onboarding/CLUB/requirements`, {
      headers: { cookie: `svc_auth_session=${encodeURIComponent(body.session.gatewayToken)}` },
    });
    const list = (
      (await requirements.json()) as {
        requirements: { fieldKey: string; currentValue: unknown }[];
      }
    ).requirements;
    expect(list.map((entry) => [entry.fieldKey, entry.currentValue])).toEqual([
      ['lastName', 'Liddell'],
      ['memberSince', '2024-02-29'],
    ]);
  });
});
