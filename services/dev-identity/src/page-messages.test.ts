import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDevIdentityService } from './dev-identity-service.js';
import {
  Browser,
  formsOf,
  signInAndExchange,
  startAuthorization,
  startDevIdentity,
  testAccounts,
  testAudience,
  testEnvironments,
  unescapeHtml,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

// What the identity pages say when something is wrong or worth knowing, over real HTTP
// against the service: the e-mail verification state on the account page, and the server's
// own refusals beside the field they concern. Forms are posted directly, as a browser that
// skips its own `minlength` check would, so only the server's message can appear.

let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity();
});
afterAll(() => identity.close());

async function registrationForm(browser: Browser) {
  const started = await startAuthorization(browser, {
    issuer: identity.issuer('PROD'),
    extra: { screen_hint: 'signup' },
  });
  const page = await started.response.text();
  const form = formsOf(page, started.url).get('register');
  if (form === undefined) throw new Error(`No registration form:\n${page}`);
  return { started, page, form };
}

/** The note with this id, as text, or undefined when the page has none. */
function noteOf(page: string, id: string): string | undefined {
  const match = new RegExp(`<p class="[a-z-]+" id="${id}"[^>]*>([\\s\\S]*?)</p>`).exec(page);
  return match?.[1] === undefined ? undefined : match[1].replace(/\s+/g, ' ').trim();
}

/** The attributes of the input with this id. */
function inputOf(page: string, id: string): string {
  return new RegExp(`<input\\s+id="${id}"([^>]*)>`).exec(page)?.[1] ?? '';
}

describe('the account page', () => {
  it.each([
    ['bob@example.com', 'bob-password', 'Not verified'],
    ['alice@example.com', 'alice-password', 'Verified'],
  ])('shows whether the e-mail address of %s is verified', async (email, password, state) => {
    const { browser } = await signInAndExchange({
      issuer: identity.issuer('PROD'),
      email,
      password,
    });
    const page = await (await browser.get(`${identity.origin}/account?env=PROD`)).text();
    expect(page).toMatch(
      new RegExp(
        `<dt>E-mail</dt>\\s*<dd>${email}</dd>\\s*<dt>E-mail status</dt>\\s*<dd>${state}</dd>`,
      ),
    );
  });

  it('shows a refused new password beside its field, and the rule before that', async () => {
    const { browser } = await signInAndExchange({
      issuer: identity.issuer('PROD'),
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const accountUrl = `${identity.origin}/account?env=PROD`;
    const page = await (await browser.get(accountUrl)).text();
    expect(noteOf(page, 'newPassword-hint')).toBe('At least 8 characters.');
    expect(noteOf(page, 'newPassword-error')).toBeUndefined();
    const form = formsOf(page, accountUrl).get('password');

    const short = await browser.post(form?.action ?? '', {
      ...form?.fields,
      currentPassword: 'alice-password',
      newPassword: 'short',
      newPasswordConfirmation: 'short',
    });
    expect(short.status).toBe(400);
    const refused = await short.text();
    expect(noteOf(refused, 'newPassword-error')).toBe('The password needs at least 8 characters.');
    expect(inputOf(refused, 'newPassword')).toContain(
      'aria-describedby="newPassword-hint newPassword-error" aria-invalid="true"',
    );
    expect(refused).not.toContain('class="error"');

    const wrong = await browser.post(form?.action ?? '', {
      ...form?.fields,
      currentPassword: 'not-alices',
      newPassword: 'long-enough',
      newPasswordConfirmation: 'long-enough',
    });
    expect(wrong.status).toBe(400);
    expect(noteOf(await wrong.text(), 'currentPassword-error')).toBe(
      'The current password is not correct.',
    );
  });
});

describe('the registration page', () => {
  it('states the password rule beside the field before anything is sent', async () => {
    const { page } = await registrationForm(new Browser());
    expect(noteOf(page, 'password-hint')).toBe('At least 8 characters.');
    expect(inputOf(page, 'password')).toContain('minlength="8"');
    expect(inputOf(page, 'password')).toContain('aria-describedby="password-hint"');
    expect(page).not.toContain('role="alert"');
  });

  it.each([
    [
      'password',
      { password: 'short', passwordConfirmation: 'short' },
      'The password needs at least 8 characters.',
    ],
    [
      'passwordConfirmation',
      { password: 'long-enough', passwordConfirmation: 'different' },
      'The two passwords are not the same.',
    ],
    [
      'email',
      { email: 'not-an-address', password: 'long-enough', passwordConfirmation: 'long-enough' },
      'Enter a valid e-mail address.',
    ],
  ])(
    "shows the server's refusal beside the field %s when the browser's check is bypassed",
    async (field, values, message) => {
      const browser = new Browser();
      const { form } = await registrationForm(browser);
      const response = await browser.post(form.action, {
        email: 'frank@example.com',
        name: 'Frank',
        ...values,
      });
      expect(response.status).toBe(400);
      const page = await response.text();
      expect(noteOf(page, `${field}-error`)).toBe(message);
      expect(inputOf(page, field)).toContain('aria-invalid="true"');
      expect(page.match(/role="alert"/g)).toHaveLength(1);
      expect(page).toContain('value="Frank"');
    },
  );

  it('says an address is taken without naming the environment, with a way to sign in', async () => {
    const browser = new Browser();
    const { form } = await registrationForm(browser);
    const response = await browser.post(form.action, {
      email: 'Alice@Example.com',
      name: 'Alice Again',
      password: 'long-enough',
      passwordConfirmation: 'long-enough',
    });
    expect(response.status).toBe(409);
    const page = await response.text();
    const note = noteOf(page, 'email-error') ?? '';
    expect(note).toMatch(
      /^An account with this e-mail address already exists\. <a href="[^"]+">Sign in instead<\/a>\.$/,
    );
    expect(page).not.toContain('already exists in');

    const href = unescapeHtml(/<a href="([^"]+)">Sign in instead/.exec(note)?.[1] ?? '');
    const signIn = await browser.get(new URL(href, form.action).href);
    expect(signIn.status).toBe(200);
    const signInPage = await signIn.text();
    expect(signInPage).toContain('<h1>Sign in</h1>');
    expect(formsOf(signInPage, form.action).get('login')?.fields.email).toBe('Alice@Example.com');
  });
});

describe('/favicon.ico of the service on its own', () => {
  it('answers 204, so browsers log no 404', async () => {
    const service = await createDevIdentityService({
      publicOrigin: 'http://127.0.0.1',
      environments: testEnvironments,
      accounts: testAccounts,
      audience: testAudience,
    });
    // As main.ts serves it: a bare server, no `next`.
    const server = createServer((req, res) => service.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/favicon.ico`);
      expect(response.status).toBe(204);
      expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
      const other = await fetch(`http://127.0.0.1:${port}/nowhere`);
      expect(other.status).toBe(404);
    } finally {
      await service.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
