import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';

export type { Browser as ChromiumBrowser };
export type { BrowserContext as ChromiumContext };
export type { Page as ChromiumPage };

/**
 * The system Chromium the browser tests drive (never a browser Playwright downloads).
 * `.ci/run` installs it with apt-get when it is missing; CHROMIUM_PATH overrides it.
 */
export const chromiumExecutablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Where failing browser tests leave screenshots: `<repo>/test-artifacts/screenshots` (git-ignored). */
export const screenshotsDir = join(
  process.env.TEST_ARTIFACTS_DIR ||
    fileURLToPath(new URL('../../../test-artifacts', import.meta.url)),
  'screenshots',
);

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type TestChromium = {
  browser: Browser;
  /**
   * Runs `steps` with a page of a new browser context (its own cookies). When they fail, a
   * full-page screenshot and the page's console output are saved under `screenshotsDir`
   * (the paths are printed), then the error is rethrown. The context is closed either way.
   * Playwright waits give up after 10 seconds, well within Jest's test timeout.
   */
  withPage<T>(
    name: string,
    steps: (page: Page, context: BrowserContext) => Promise<T>,
    contextOptions?: BrowserContextOptions,
  ): Promise<T>;
  close(): Promise<void>;
};

/**
 * Headless Chromium for browser tests, through playwright-core. Launch one per test file
 * (`beforeAll`) and close it in `afterAll`.
 */
export async function launchTestBrowser(): Promise<TestChromium> {
  if (!existsSync(chromiumExecutablePath)) {
    throw new Error(
      `No Chromium at ${chromiumExecutablePath}: install it (apt-get install -y chromium, as ` +
        '.ci/run does) or set CHROMIUM_PATH',
    );
  }
  const browser = await chromium.launch({
    executablePath: chromiumExecutablePath,
    args: chromiumArgs,
  });
  return {
    browser,
    async withPage(name, steps, contextOptions = {}) {
      const context = await browser.newContext(contextOptions);
      context.setDefaultTimeout(10_000);
      const log: string[] = [];
      try {
        const page = await context.newPage();
        page.on('console', (message) => log.push(`console.${message.type()}: ${message.text()}`));
        page.on('pageerror', (error) => log.push(`pageerror: ${error.stack ?? error.message}`));
        page.on('requestfailed', (request) =>
          log.push(
            `requestfailed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`,
          ),
        );
        try {
          return await steps(page, context);
        } catch (error) {
          await saveFailure(name, page, log);
          throw error;
        }
      } finally {
        await context.close();
      }
    },
    close: () => browser.close(),
  };
}

async function saveFailure(name: string, page: Page, log: readonly string[]): Promise<void> {
  const base = join(
    screenshotsDir,
    `${name.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 80)}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  try {
    await mkdir(screenshotsDir, { recursive: true });
    await page.screenshot({ path: `${base}.png`, fullPage: true, timeout: 5_000 });
    await writeFile(`${base}.log`, [`url: ${page.url()}`, ...log, ''].join('\n'));
    process.stderr.write(
      `browser test "${name}" failed: screenshot ${base}.png, log ${base}.log\n`,
    );
  } catch (problem) {
    process.stderr.write(`browser test "${name}" failed; no screenshot: ${String(problem)}\n`);
  }
}

/**
 * What a page shows a user as going wrong from now on: each error in its console and each
 * answer of 400 or more, as lines a test can compare with `[]`.
 */
export function watchPageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  return problems;
}
