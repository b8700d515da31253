import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { launchTestBrowser, unusedLocalPort, waitFor, type TestChromium } from '@gateway/testkit';

// The "done when" in a real browser (Chromium): after the README's first command,
// a newcomer opens the demo platform, signs in with a demo account, lands on its signed-in
// page, signs out, and finds the registration page behind "Create an account". A real
// browser also holds the pages to what fetch does not check: the Content-Security-Policy,
// the Origin a form POST carries, and cookies shared by localhost's ports.

let child: ChildProcess;
let dataDir: string;
let demo: string;
let output = '';
let browser: TestChromium;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-first-run-browser-'));
  const demoPort = await unusedLocalPort();
  demo = `http://localhost:${demoPort}`;
  child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', 'services/all-in-one/src/main.ts'],
    {
      env: {
        PATH: process.env.PATH,
        PORT: String(await unusedLocalPort()),
        DEMO_PLATFORM_PORT: String(demoPort),
        GATEWAY_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(async () => output.includes('Ctrl-C stops everything'), {
    timeoutMs: 90_000,
    intervalMs: 200,
    what: 'the first-run banner',
  }).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${output}`);
  });
  browser = await launchTestBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(dataDir, { recursive: true, force: true });
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

      await page.click('text=Sign out');
      await page.waitForURL(`${demo}/`);
      await page.goto(`${demo}/me`);
      // Signed out of the platform and of the identity service: the sign-in page again.
      await page.locator('input[name="password"]').waitFor();
      expect(blocked).toEqual([]);
    });
  }, 60_000);

  it('opens the registration page from "Create an account"', async () => {
    await browser.withPage('first-run-sign-up', async (page) => {
      await page.goto(`${demo}/`);
      await page.click('text=Create an account');
      // defaultScreen=up: the identity service opens its registration page, not sign-in.
      await page.waitForURL((url) => url.pathname.startsWith('/api/auth/env/PROD/'));
      await page.locator('text=Password, again').waitFor();
      expect(await page.locator('input[type="password"]').count()).toBe(2);
    });
  }, 60_000);
});
