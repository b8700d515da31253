import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Browser,
  formsOf,
  signInAndExchange,
  startDevIdentity,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity();
});
afterAll(() => identity.close());

describe('/account (the accountManagementUrl, spec 2.5)', () => {
  it('explains that it manages passwords and sign-in methods, with no one signed in', async () => {
    const response = await new Browser().get(`${identity.origin}/account`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('Deployment (PROD)');
    expect(page).toContain('You are not signed in to this environment.');
    expect(page).toContain('Your password and your sign-in methods are managed here');
    expect(page).toContain('href="/account?env=PARTNER"');
    expect(page).not.toContain('Change password');
  });

  it('answers 404 for an unknown environment', async () => {
    const response = await new Browser().get(`${identity.origin}/account?env=NOPE`);
    expect(response.status).toBe(404);
  });

  it('shows the signed-in account of the environment and changes its password', async () => {
    const { browser } = await signInAndExchange({
      issuer: identity.issuer('PROD'),
      email: 'bob@example.com',
      password: 'bob-password',
    });
    const accountUrl = `${identity.origin}/account?env=PROD`;
    const page = await (await browser.get(accountUrl)).text();
    expect(page).toContain('<dd>bob@example.com</dd>');
    expect(page).toMatch(/<dt>E-mail status<\/dt>\s*<dd>Not verified<\/dd>/);
    // Not signed in to PARTNER with this browser.
    const partner = await (await browser.get(`${identity.origin}/account?env=PARTNER`)).text();
    expect(partner).toContain('You are not signed in to this environment.');

    const form = formsOf(page, accountUrl).get('password');
    expect(form?.fields.csrf).toBeTruthy();
    const wrong = await browser.post(form?.action ?? '', {
      ...form?.fields,
      currentPassword: 'not-bobs',
      newPassword: 'bob-new-password',
      newPasswordConfirmation: 'bob-new-password',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('The current password is not correct.');

    const forged = await browser.post(form?.action ?? '', {
      csrf: 'forged',
      currentPassword: 'bob-password',
      newPassword: 'bob-new-password',
      newPasswordConfirmation: 'bob-new-password',
    });
    expect(forged.status).toBe(403);

    const changed = await browser.post(form?.action ?? '', {
      ...form?.fields,
      currentPassword: 'bob-password',
      newPassword: 'bob-new-password',
      newPasswordConfirmation: 'bob-new-password',
    });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('Your password is changed.');

    await expect(
      signInAndExchange({
        issuer: identity.issuer('PROD'),
        email: 'bob@example.com',
        password: 'bob-password',
      }),
    ).rejects.toThrow(/Sign-in failed: 401/);
    await signInAndExchange({
      issuer: identity.issuer('PROD'),
      email: 'bob@example.com',
      password: 'bob-new-password',
    });
  });

  it('refuses a password change from a browser without the identity session', async () => {
    const response = await new Browser().post(`${identity.origin}/account/password?env=PROD`, {
      csrf: 'anything',
      currentPassword: 'alice-password',
      newPassword: 'alice-new-password',
      newPasswordConfirmation: 'alice-new-password',
    });
    expect(response.status).toBe(403);
  });
});
