import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  launchTestBrowser,
  watchPageProblems,
  type ChromiumPage,
  type TestChromium,
} from '@gateway/testkit';
import { startEmbeddedProcess, type EmbeddedProcess } from './testing/embedded-process.js';

// Where people see their sessions, in Chromium against the README's first command (one
// gateway and one browser for the file, steps in order): alice signs in to the demo platform
// in two browsers, sees both sessions on its /me page and ends the other one with "Sign out
// everywhere else"; then an admin sees alice's sessions in the admin console and ends one.
// Every page of these steps shows no error in the console and gets no answer of 400 or more.
// (A session the admin ends reaches a platform at its next introspection, within the 30 to 60
// seconds it may cache an answer: the demo's own "Sign out everywhere else" drops its cache
// at once, the admin's end is checked in the console's list.)

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

async function signInOnIdentity(page: ChromiumPage, email: string, password: string) {
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
}

/** Signs alice in on the demo platform, from its home page to /me. */
async function signInToDemo(page: ChromiumPage) {
  await page.goto(`${demo}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await signInOnIdentity(page, 'alice@example.com', 'alice-password');
  await page.waitForURL(`${demo}/me`);
}

/** The rows of the "Your sessions" table on the demo's /me. */
const sessionRows = (page: ChromiumPage) =>
  page.getByRole('region', { name: 'Your sessions' }).locator('tbody tr');

/**
 * The demo's answer to the next navigation to /me, before anything it redirects to: a
 * signed-out browser is sent to the login route.
 */
async function nextAnswerToMe(page: ChromiumPage) {
  const answer = page.waitForResponse((response) => response.url() === `${demo}/me`);
  const navigation = page.goto(`${demo}/me`);
  const first = await answer;
  await navigation;
  return { status: first.status(), location: first.headers().location };
}

describe("alice's sessions on the demo platform", () => {
  it('lists two sessions, this one marked, and "Sign out everywhere else" ends the other', async () => {
    await browser.withPage('sessions-here', async (here) => {
      const problemsHere = watchPageProblems(here);
      await browser.withPage('sessions-elsewhere', async (elsewhere) => {
        const problemsElsewhere = watchPageProblems(elsewhere);
        await signInToDemo(elsewhere);
        await signInToDemo(here);

        const rows = sessionRows(here);
        await expect(rows.count()).resolves.toBe(2);
        const marked = rows.filter({ hasText: 'this session' });
        await expect(marked.count()).resolves.toBe(1);
        // Newest first: the session of this browser, signed in last, leads the list.
        expect(await rows.first().innerText()).toContain('this session');
        for (const text of await rows.allInnerTexts()) {
          expect(text).toContain('Demo platform');
          expect(text).toContain('PROD (development)');
          expect(text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
        }

        await here.getByRole('button', { name: 'Sign out everywhere else' }).click();
        await here.waitForURL(`${demo}/me?ended=1`);
        await here
          .getByRole('status')
          .filter({ hasText: 'Signed out of 1 other session.' })
          .waitFor();
        await expect(rows.count()).resolves.toBe(1);
        expect(await rows.first().innerText()).toContain('this session');
        expect(await here.locator('main').innerText()).toContain(
          'You are not signed in anywhere else.',
        );

        // The other browser's next page: the platform session is gone, so the demo sends it
        // to sign in (the identity service's own session then signs it in afresh).
        expect(await nextAnswerToMe(elsewhere)).toEqual({
          status: 302,
          location: '/auth/login?returnTo=%2Fme',
        });
        expect(problemsElsewhere).toEqual([]);
      });
      expect(problemsHere).toEqual([]);
    });
  });
});

describe("alice's sessions in the admin console", () => {
  it("shows an admin alice's live sessions and ends one", async () => {
    await browser.withPage('sessions-admin', async (page) => {
      const problems = watchPageProblems(page);
      await page.goto(`${gateway}/admin/`);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await signInOnIdentity(page, 'admin@example.com', 'admin-password');
      await page.waitForURL(`${gateway}/admin/`);
      await page
        .getByRole('navigation', { name: 'Areas' })
        .getByRole('link', { name: 'Users' })
        .click();
      await page.getByLabel('E-mail contains').fill('alice@');
      await page.getByRole('rowheader', { name: /alice@example.com/ }).waitFor();

      // A short label in the row; the user it acts on in the button's name and title.
      const toggle = page.getByRole('button', {
        name: 'Sessions of alice@example.com',
        exact: true,
      });
      expect(await toggle.innerText()).toBe('Sessions');
      expect(await toggle.getAttribute('title')).toBe('Sessions of alice@example.com');
      await toggle.click();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      const panel = page.getByRole('region', { name: 'Live sessions of alice@example.com' });
      const rows = panel.locator('tbody tr');
      await rows.first().waitFor();
      // Alice's live sessions from the steps above: at least the one that stayed.
      const before = await rows.count();
      expect(before).toBeGreaterThanOrEqual(1);
      for (const text of await rows.allInnerTexts()) {
        expect(text).toContain('Demo platform (DEMO)');
        expect(text).toContain('PROD · development');
      }

      const end = rows
        .first()
        .getByRole('button', { name: /^End session [0-9a-f]{8} of alice@example\.com$/ });
      expect(await end.innerText()).toBe('End');
      const name = (await end.getAttribute('aria-label')) ?? '';
      expect(await end.getAttribute('title')).toBe(name);
      await end.click();
      const dialog = page.getByRole('dialog');
      await expect(dialog.locator('.consequences li').count()).resolves.toBeGreaterThan(0);
      await dialog.getByRole('button', { name: 'End the session' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await panel
        .getByRole('status')
        .filter({ hasText: `The ${name.replace(/^End /, '')} ended.` })
        .waitFor();
      await page.getByRole('button', { name, exact: true }).waitFor({ state: 'detached' });
      await expect(rows.count()).resolves.toBe(before - 1);
      expect(problems).toEqual([]);
    });
  });
});
