import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AxeBuilder } from '@axe-core/playwright';
import {
  launchTestBrowser,
  type ChromiumContext,
  type ChromiumPage,
  type TestChromium,
} from '@gateway/testkit';
import { startEmbeddedProcess, type EmbeddedProcess } from './testing/embedded-process.js';

// The admin console at /admin/ as an admin uses it, in Chromium against the README's first
// command (one gateway and one browser for the file, steps in order): sign in as the seeded
// admin, register a platform and complete a sign-in on it, rotate its key while the old one
// still works, add a required onboarding field and meet it at the next sign-in, grant and
// revoke an admin, end a user's sessions, and find each action in the audit log. Every
// page passes axe with no serious or critical violation. With ADMIN_CONSOLE_SCREENSHOTS set
// to a folder, the main pages are saved there (`pnpm screenshots` in services/admin-console).

const screenshots = process.env.ADMIN_CONSOLE_SCREENSHOTS;
let embedded: EmbeddedProcess;
let gateway: string;
let browser: TestChromium;
let admin: ChromiumContext;
let page: ChromiumPage;
const cspViolations: string[] = [];
let axeRunning = false;

type Violation = {
  blockedURI: string;
  violatedDirective: string;
  sourceFile: string;
  lineNumber: number;
  columnNumber: number;
  url: string;
};

/**
 * axe-core's own `<style>`, the one violation the console's policy may meet, and only while
 * axe runs. axe reads a shadow root's linked stylesheets (the onboarding preview's) by
 * appending `<style>@import "…"</style>` to a document it creates: its report names an
 * inline `style-src-elem` at line 23953, column 25 of a script without a file, which is
 * `dynamicDoc.head.appendChild(style)` in getStyleSheetFactory of axe-core 4.14's axe.js
 * (axe.source starts at the file's line 12). The console's own code always runs from a file
 * under /admin/assets/, so a violation it caused names that file and is never excused.
 */
const isAxeStyleInjection = (violation: Violation) =>
  axeRunning &&
  violation.sourceFile === '' &&
  violation.blockedURI === 'inline' &&
  violation.violatedDirective === 'style-src-elem';

/** Records every CSP violation of the context's pages, as the page's own event reports it. */
async function watchCsp(context: ChromiumContext) {
  await context.exposeBinding('reportCspViolation', (_source, violation: Violation) => {
    if (!isAxeStyleInjection(violation)) cspViolations.push(JSON.stringify(violation));
  });
  // A script of the page (the test's tsconfig has no DOM types, so it is given as text).
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      window.reportCspViolation({
        blockedURI: event.blockedURI,
        violatedDirective: event.violatedDirective,
        sourceFile: event.sourceFile,
        lineNumber: event.lineNumber,
        columnNumber: event.columnNumber,
        url: location.href,
      });
    });`,
  });
}

beforeAll(async () => {
  embedded = await startEmbeddedProcess();
  gateway = embedded.gateway;
  browser = await launchTestBrowser();
  admin = await browser.browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Generous for a busy machine: a wait ends as soon as what it waits for appears.
  admin.setDefaultTimeout(60_000);
  await watchCsp(admin);
  page = await admin.newPage();
  if (screenshots !== undefined) await mkdir(screenshots, { recursive: true });
});

afterAll(async () => {
  await admin?.close();
  await browser?.close();
  await embedded?.stop();
});

/** No serious or critical axe violation on the page as it is now. */
async function expectAccessible(on: ChromiumPage, name: string) {
  axeRunning = true;
  const results = await new AxeBuilder({ page: on })
    .analyze()
    // One turn of the page's task queue: violation events that axe's run queued are
    // dispatched (and reported) while the exception still applies.
    .finally(() => on.evaluate(() => new Promise((resolve) => setTimeout(resolve))))
    .finally(() => {
      axeRunning = false;
    });
  const severe = results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${name}: ${violation.id} (${violation.impact}) ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
  expect(severe).toEqual([]);
}

async function snapshot(on: ChromiumPage, name: string) {
  if (screenshots !== undefined) await on.screenshot({ path: `${screenshots}/${name}.png` });
}

async function signInOnIdentity(on: ChromiumPage, email: string, password: string) {
  await on.fill('input[name="email"]', email);
  await on.fill('input[name="password"]', password);
  await on.click('button[type="submit"]');
}

async function openArea(label: string) {
  await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: label }).click();
  await page
    .getByRole('heading', { level: 1, name: label === 'Platforms' ? 'Platforms' : label })
    .waitFor();
}

/** Opens a confirmation dialog with `button`, checks it explains itself, and confirms. */
async function confirmIn(button: string, confirm: string) {
  await page.getByRole('button', { name: button, exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.locator('.consequences li').count()).resolves.toBeGreaterThan(0);
  await dialog.getByRole('button', { name: confirm }).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** The error alert beside an action, with the gateway's code and status. */
async function alertShows(code: string, status: number, text: string | RegExp) {
  await page
    .getByRole('alert')
    .filter({ hasText: `Error code ${code} (HTTP ${status}).` })
    .filter({ hasText: text })
    .waitFor();
}

async function auditShows(kind: string, target: string) {
  await openArea('Audit log');
  await page.getByLabel('Kind').selectOption(kind);
  await page.getByLabel('Platform, environment or user e-mail').fill(target);
  await page.locator('.audit li', { hasText: kind }).filter({ hasText: target }).first().waitFor();
}

const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

async function introspectWith(clientId: string, secret: string) {
  const response = await fetch(`${gateway}/v1/auth/introspect`, {
    method: 'POST',
    headers: { authorization: basic(clientId, secret), 'content-type': 'application/json' },
    body: JSON.stringify({ token: 'not-a-session' }),
  });
  return response.status;
}

describe('the admin console in Chromium', () => {
  it('asks to sign in, signs the seeded admin in and lists the platform DEMO', async () => {
    // Signed out, the console asks nothing it would be refused: no 401 in the browser console.
    const problems: string[] = [];
    const onConsole = (message: { type(): string; text(): string }) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    };
    const onResponse = (response: { status(): number; url(): string }) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    };
    page.on('console', onConsole);
    page.on('response', onResponse);
    await page.goto(`${gateway}/admin/`);
    await page.getByRole('heading', { name: 'Sign in to the admin console' }).waitFor();
    page.off('console', onConsole);
    page.off('response', onResponse);
    expect(problems).toEqual([]);
    await expectAccessible(page, 'sign-in');
    await snapshot(page, 'sign-in');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInOnIdentity(page, 'admin@example.com', 'admin-password');
    await page.waitForURL(`${gateway}/admin/`);
    await page.getByRole('rowheader', { name: 'DEMO' }).waitFor();
    expect(await page.locator('header').innerText()).toContain('admin@example.com');
    await expectAccessible(page, 'platforms');
    await snapshot(page, 'platforms');
  });

  let firstKey: { clientId: string; clientSecret: string };
  it('registers a platform with its redirect pair, shows its key once, and a sign-in on it completes', async () => {
    await page.getByRole('link', { name: 'Register a platform' }).click();
    await page.getByLabel('Platform key').fill('shop');
    expect(await page.getByLabel('Platform key').inputValue()).toBe('SHOP');
    await page.getByLabel('Display name').fill('Shop');
    await page.getByRole('button', { name: 'Register the platform' }).click();
    // Checked in the browser as the gateway does: errors next to the fields.
    await page.locator('#pair-0-return-error').waitFor();
    await page.getByLabel('Return URL').fill('https://shop.example/');
    await page.getByLabel('Callback URL').fill('https://shop.example/auth/callback');
    await expectAccessible(page, 'new platform');
    await snapshot(page, 'new-platform');
    await page.getByRole('button', { name: 'Register the platform' }).click();
    await page.getByText('You will not see this secret again.').waitFor();
    firstKey = {
      clientId: await page.getByTestId('issued-client-id').innerText(),
      clientSecret: await page.getByTestId('issued-client-secret').innerText(),
    };
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    await page.getByRole('heading', { name: /Shop/ }).first().waitFor();

    // The gateway's refusals, beside the field they are about and the button.
    await openArea('Platforms');
    await page.getByRole('link', { name: 'Register a platform' }).click();
    await page.getByLabel('Platform key').fill('SHOP');
    await page.getByLabel('Display name').fill('Shop again');
    await page.getByLabel('Return URL').fill('https://shop.example/again');
    await page.getByLabel('Callback URL').fill('https://shop.example/again/callback#top');
    await page.getByRole('button', { name: 'Register the platform' }).click();
    await page.locator('#pair-0-callback-error').filter({ hasText: 'fragment' }).waitFor();
    await alertShows('VALIDATION_ERROR', 400, 'redirectPairs.0.callbackUrl');
    await page.getByLabel('Callback URL').fill('https://shop.example/again/callback');
    await page.getByRole('button', { name: 'Register the platform' }).click();
    await page.locator('#new-platform-key-error').filter({ hasText: 'key exists' }).waitFor();
    await alertShows('CONFLICT', 409, 'archived keys stay reserved');

    // A sign-in on SHOP in another browser (a sign-in sets the gateway cookie, which would
    // replace the console's session here): back at SHOP's callback with a handoff code, which
    // SHOP's backend redeems with the key.
    const callbackUrl = await browser.withPage('admin-console-shop-sign-in', async (user) => {
      const callback = new Promise<string>((resolve) => {
        void user.route('https://shop.example/**', async (route) => {
          resolve(route.request().url());
          await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>shop</p>' });
        });
      });
      await user.goto(
        `${gateway}/v1/auth/start?platformKey=SHOP&returnTo=${encodeURIComponent('https://shop.example/')}`,
      );
      await signInOnIdentity(user, 'alice@example.com', 'alice-password');
      return callback;
    });
    const code = new URL(callbackUrl).searchParams.get('code') ?? '';
    expect(code).toMatch(/^handoff_/);
    const exchange = await fetch(`${gateway}/v1/auth/exchange`, {
      method: 'POST',
      headers: {
        authorization: basic(firstKey.clientId, firstKey.clientSecret),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ code }),
    });
    expect(exchange.status).toBe(200);
    expect(((await exchange.json()) as { platform: { key: string } }).platform.key).toBe('SHOP');
  });

  it('rotates the key; the old secret keeps working in the grace period', async () => {
    await page.goto(`${gateway}/admin/platforms/SHOP`);
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    // Another admin issues the backend key while this page still offers it.
    const issueBackend = page.getByRole('button', { name: 'Issue a backend key' });
    await issueBackend.waitFor();
    const elsewhere = await embedded.admin('POST', '/v1/platforms/SHOP/credentials', {
      kind: 'backend',
    });
    expect(elsewhere.status).toBe(201);
    await issueBackend.click();
    await alertShows('CONFLICT', 409, 'The platform already has a backend key.');
    await expectAccessible(page, 'platform');
    await snapshot(page, 'platform');
    // Short labels in the rows; the key each acts on is in the button's name and title.
    const rotate = page.getByRole('button', { name: `Rotate ${firstKey.clientId}`, exact: true });
    expect(await rotate.innerText()).toBe('Rotate');
    expect(await rotate.getAttribute('title')).toBe(`Rotate ${firstKey.clientId}`);
    await confirmIn(`Rotate ${firstKey.clientId}`, 'Rotate the key');
    await page.getByText('You will not see this secret again.').waitFor();
    const rotated = await page.getByTestId('issued-client-secret').innerText();
    expect(rotated).not.toBe(firstKey.clientSecret);
    expect(await introspectWith(firstKey.clientId, rotated)).toBe(200);
    expect(await introspectWith(firstKey.clientId, firstKey.clientSecret)).toBe(200);
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    await page.getByRole('cell', { name: /\d/ }).first().waitFor();
    await auditShows('platform.credential_rotated', 'SHOP');
    await auditShows('platform.created', 'SHOP');
  });

  it('adds a required onboarding field with a live preview; the next sign-in stops at the onboarding page', async () => {
    await page.goto(`${gateway}/admin/onboarding/DEMO`);
    const before = Number(await page.getByTestId('requirement-version').innerText());
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.getByLabel('Field key').fill('employeeId');
    await page.getByLabel('Label', { exact: true }).fill('Employee number');
    await page.getByLabel('Required: stop the sign-in until it is filled in').check();
    // The preview renders the draft as the onboarding page does.
    const preview = page.getByTestId('onboarding-preview');
    await preview.locator('#field-employeeId').waitFor();
    await page.getByRole('button', { name: 'Check the values' }).click();
    await preview.getByText('This field is required.').waitFor();
    await expectAccessible(page, 'onboarding');
    await snapshot(page, 'onboarding');
    await page.getByRole('button', { name: 'Add the field' }).click();
    await page.getByText('The field is added.').waitFor();
    await page
      .getByTestId('requirement-version')
      .filter({ hasText: new RegExp(`^${before + 1}$`) })
      .waitFor();
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.getByLabel('Field key').fill('employeeId');
    await page.getByLabel('Label', { exact: true }).fill('Employee number again');
    await page.getByRole('button', { name: 'Add the field' }).click();
    await page.locator('#field-editor-fieldKey-error').filter({ hasText: 'already has' }).waitFor();
    await alertShows('CONFLICT', 409, 'Platform DEMO already has a field employeeId.');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await browser.withPage('admin-console-onboarding-stop', async (user) => {
      await user.goto(`${embedded.demo}/`);
      await user.click('text=Sign in');
      await signInOnIdentity(user, 'alice@example.com', 'alice-password');
      await user.waitForURL((url) => url.pathname === '/env/PROD/onboarding');
      await user.locator('#field-employeeId').waitFor();
    });
    await confirmIn('Archive employeeId', 'Archive the field');
    await page.getByText('Employee number is archived').waitFor();
  });

  it("grants and revokes platform_admin and ends all of a user's sessions, with the results shown", async () => {
    await openArea('Users');
    await page.getByLabel('E-mail contains').fill('alice@');
    await page.getByRole('rowheader', { name: /alice@example.com/ }).waitFor();
    await expectAccessible(page, 'users');
    await snapshot(page, 'users');
    await confirmIn('Grant admin to alice@example.com', 'Grant the role');
    await page.getByText('alice@example.com is now a platform admin').waitFor();
    await confirmIn('Revoke admin from alice@example.com', 'Revoke the role');
    await page.getByText('alice@example.com is no longer a platform admin.').waitFor();
    await page.getByRole('button', { name: 'Sessions of alice@example.com', exact: true }).click();
    const sessions = page.getByRole('region', { name: 'Live sessions of alice@example.com' });
    // Loaded: her sessions' table, or the words that she has none.
    await sessions
      .locator('tbody tr')
      .first()
      .or(sessions.getByText('No live sessions.'))
      .waitFor();
    await expectAccessible(page, 'user sessions');
    await snapshot(page, 'user-sessions');
    await confirmIn('End all sessions of alice@example.com', 'End the sessions');
    await page
      .getByText(/Ended \d+ gateway session\(s\) of alice@example.com; identity sessions revoked/)
      .waitFor();
    await sessions.getByText('No live sessions.').waitFor();
    // The last admin stays: the refusal stays in the dialog, beside its button.
    await page.getByLabel('E-mail contains').fill('admin@example.com');
    await page.getByRole('button', { name: 'Revoke admin from admin@example.com' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke the role' }).click();
    await alertShows('LAST_PLATFORM_ADMIN', 409, 'Grant the role to another');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await auditShows('user_role.granted', 'alice@example.com');
    await auditShows('user_role.revoked', 'alice@example.com');
    await auditShows('session.revoked', 'alice@example.com');
    await page.locator('.audit summary').first().click();
    await expectAccessible(page, 'audit');
    await snapshot(page, 'audit');
  });

  it('names the user of a sign-in record by e-mail, the user id on hover and in the detail', async () => {
    const answer = await embedded.admin(
      'GET',
      '/v1/audit-records?kind=auth.sign_in_succeeded&platform=SHOP&pageSize=1',
    );
    const { items } = (await answer.json()) as {
      items: { actor: { subject: string; email: string | null } }[];
    };
    const userId = items[0]?.actor.subject ?? '';
    expect(items[0]?.actor.email).toBeNull();
    expect(userId).not.toBe('');
    await page.goto(`${gateway}/admin/audit`);
    await page.getByLabel('Kind').selectOption('auth.sign_in_succeeded');
    await page.getByLabel('Platform', { exact: true }).selectOption('SHOP');
    const record = page.locator('.audit li').first();
    const actor = record.locator('summary span[title]');
    await actor.filter({ hasText: 'alice@example.com' }).waitFor();
    expect(await actor.getAttribute('title')).toBe(userId);
    expect(await record.locator('summary').innerText()).not.toContain(userId);
    await record.locator('summary').click();
    expect(await record.locator('dl').innerText()).toContain(`subject ${userId}`);
  });

  it('offers every kind of audit record the API accepts in the Kind filter', async () => {
    const response = await fetch(`${gateway}/openapi.json`);
    const openapi = (await response.json()) as {
      paths: Record<
        string,
        { get: { parameters: { name: string; schema: { enum: string[] } }[] } }
      >;
    };
    const kindParameter = openapi.paths['/v1/audit-records']?.get.parameters.find(
      (parameter) => parameter.name === 'kind',
    );
    await page.goto(`${gateway}/admin/audit`);
    const filter = page.getByLabel('Kind');
    await filter.waitFor();
    const offered = await filter.locator('option:not([value=""])').allTextContents();
    expect(kindParameter?.schema.enum.length).toBeGreaterThan(0);
    expect(offered).toEqual(kindParameter?.schema.enum);
  });

  it('filters the audit log on the server by actor, platform and time, and names a refused filter', async () => {
    await page.goto(`${gateway}/admin/audit`);
    await page.getByLabel('Platform', { exact: true }).selectOption('SHOP');
    await page.getByLabel('Actor', { exact: true }).fill('ADMIN@example.com');
    // Until the filtered answer arrives the page still lists the records it had: wait for the
    // count the API gives for these filters.
    const answer = await embedded.admin(
      'GET',
      '/v1/audit-records?platform=SHOP&actor=ADMIN%40example.com&pageSize=100',
    );
    const { total } = (await answer.json()) as { total: number };
    expect(total).toBeGreaterThan(1);
    await page
      .getByRole('status')
      .filter({ hasText: `${total} record(s).` })
      .waitFor();
    const shown = await page.locator('.audit li summary').allInnerTexts();
    expect(shown).toHaveLength(total);
    expect(shown.filter((text) => text.includes('platform.credential_rotated'))).not.toEqual([]);
    for (const text of shown) expect(text).toMatch(/SHOP by admin@example\.com$/);

    await page.getByLabel('From').fill('2099-01-02T00:00');
    await page.getByLabel('Until').fill('2099-01-01T00:00');
    await page.locator('#audit-until-error').filter({ hasText: 'must not be before' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'VALIDATION_ERROR (HTTP 400)' }).waitFor();
    await page.getByLabel('Until').fill('');
    await page.getByRole('status').filter({ hasText: '0 record(s).' }).waitFor();
  });

  it('validates an identity environment check by check', async () => {
    await openArea('Identity environments');
    const form = page.getByRole('form', { name: 'Add an identity environment' });
    await form.getByLabel('Environment key').fill('PARTNER');
    await form.getByLabel('Display name').fill('Partner');
    await form.getByLabel('Issuer').fill('http://id.partner.example/');
    await form.getByLabel("The gateway's client id").fill('gateway');
    await form.getByRole('button', { name: 'Add the environment' }).click();
    await page.locator('#new-env-issuer-error').filter({ hasText: /\S/ }).waitFor();
    await alertShows('VALIDATION_ERROR', 400, /^issuer /);
    await expectAccessible(page, 'environments');
    await page.getByRole('link', { name: 'PROD', exact: true }).click();
    await page.getByRole('button', { name: 'Validate the environment' }).click();
    for (const check of ['discovery', 'endpoints', 'jwks', 'client']) {
      await page.getByRole('rowheader', { name: check, exact: true }).waitFor();
    }
    await expectAccessible(page, 'environment');
    await snapshot(page, 'environment');
  });

  it('shows a non-admin a clear no-access page', async () => {
    await browser.withPage('admin-console-no-access', async (user, context) => {
      await watchCsp(context);
      await user.goto(`${gateway}/admin/sign-in`);
      await signInOnIdentity(user, 'alice@example.com', 'alice-password');
      await user.getByRole('heading', { name: 'No access' }).waitFor();
      expect(await user.locator('main').innerText()).toContain('alice@example.com');
      await expectAccessible(user, 'no access');
    });
    expect(cspViolations).toEqual([]);
  });
});
