import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { launchTestBrowser, type ChromiumPage, type TestChromium } from '@gateway/testkit';
import { startDevIdentity, type RunningDevIdentity } from '../testing/dev-identity-harness.js';
import { startGatewayStandIn, type GatewayStandIn } from '../testing/gateway-stand-in.js';

// The onboarding page in Chromium, against a STAND-IN for the gateway (testing/
// gateway-stand-in.ts: canned answers on 127.0.0.1, another origin of the same site, as in
// a split deployment). It checks what the page does with the gateway's answers: rendering,
// client-side validation, normalisation, error placement and navigation. The end-to-end
// test with the real gateway endpoints (spec 4.9) is separate.

const transactionId = '6a1f4e2b-8c3d-4e5f-9a0b-1c2d3e4f5a6b';
const sessionCookie = 'svc_auth_session=the-gateway-session';

type TestRequirement = Record<string, unknown> & { fieldKey: string };

const field = (fieldKey: string, properties: Record<string, unknown>): TestRequirement => ({
  scope: 'PLATFORM',
  platformId: '0b6d3c1e-2f4a-4b5c-8d9e-0f1a2b3c4d5e',
  fieldKey,
  label: fieldKey,
  fieldType: 'TEXT',
  source: 'CUSTOM_FIELD',
  profileFieldKey: null,
  description: null,
  placeholder: null,
  sortOrder: 0,
  required: false,
  options: [],
  validation: {},
  uiConfig: {},
  currentValue: null,
  ...properties,
});
const globalField = (fieldKey: string, properties: Record<string, unknown>) =>
  field(fieldKey, {
    scope: 'GLOBAL',
    platformId: null,
    source: 'PROFILE_FIELD',
    profileFieldKey: fieldKey,
    ...properties,
  });

const globalFields = [
  globalField('firstName', {
    label: 'First name',
    required: true,
    placeholder: 'Ada',
    uiConfig: { section: 'About you', width: 'half', helpText: 'As on your passport.' },
    currentValue: 'Ada',
  }),
  globalField('lastName', {
    label: 'Last name',
    required: true,
    uiConfig: { section: 'About you', width: 'half' },
  }),
  globalField('phoneNumber', {
    label: 'Mobile phone',
    fieldType: 'PHONE',
    required: true,
    placeholder: '+49 30 1234567',
    uiConfig: { section: 'About you', width: 'third' },
  }),
  globalField('residenceCountryCode', {
    label: 'Country of residence',
    fieldType: 'COUNTRY',
    required: true,
    uiConfig: { section: 'About you', width: 'third' },
  }),
  globalField('dateOfBirth', {
    label: 'Date of birth',
    fieldType: 'DATE',
    uiConfig: { section: 'About you', width: 'third' },
  }),
  globalField('bio', {
    label: 'About <you>',
    fieldType: 'TEXTAREA',
    description: '<b>Tell us</b> about yourself <img src=x onerror=alert(1)>',
    uiConfig: { section: 'About you' },
  }),
];
const platformFields = [
  field('companySize', {
    label: 'Company size',
    fieldType: 'NUMBER',
    validation: { min: 1, max: 10000 },
    uiConfig: { section: 'Your company', width: 'half' },
  }),
  field('newsletter', {
    label: 'Monthly newsletter',
    fieldType: 'BOOLEAN',
    required: true,
    uiConfig: { section: 'Your company', helpText: 'One e-mail a month.' },
  }),
  field('plan', {
    label: 'Plan',
    fieldType: 'SELECT',
    required: true,
    options: [
      { value: 'basic', label: 'Basic' },
      { value: 'pro', label: 'Professional' },
    ],
    uiConfig: { section: 'Your company' },
  }),
  field('interests', {
    label: 'Interests',
    fieldType: 'MULTI_SELECT',
    options: [
      { value: 'api', label: 'API' },
      { value: 'ui', label: 'User interface' },
      { value: 'ops', label: 'Operations' },
    ],
    uiConfig: { section: 'Your company' },
  }),
  field('contactEmail', {
    label: 'Work e-mail',
    fieldType: 'EMAIL',
    required: true,
    uiConfig: { section: 'Your company', width: 'half' },
  }),
  field('website', {
    label: 'Website',
    fieldType: 'URL',
    placeholder: 'https://',
    uiConfig: { section: 'Your company', width: 'half' },
  }),
];
const platformRequirements = {
  platformKey: 'ACME_SHOP',
  platformDisplayName: 'Acme <Shop>',
  requirementVersion: 7,
  requirements: [...globalFields, ...platformFields],
};

let chromium: TestChromium;
let gateway: GatewayStandIn;
let identity: RunningDevIdentity;

beforeAll(async () => {
  chromium = await launchTestBrowser();
  gateway = await startGatewayStandIn();
  identity = await startDevIdentity({ gatewayBaseUrl: gateway.origin });
});
afterAll(async () => {
  await chromium?.close();
  await gateway?.close();
  await identity?.close();
});
beforeEach(() => {
  gateway.requests.length = 0;
  gateway.reply('GET /v1/onboarding/ACME_SHOP/requirements', {
    status: 200,
    body: platformRequirements,
  });
  gateway.reply('PUT /v1/onboarding/ACME_SHOP/values', { status: 200, body: { saved: true } });
  gateway.reply('POST /v1/onboarding/ACME_SHOP/complete', {
    status: 200,
    body: { platformKey: 'ACME_SHOP', status: 'COMPLETE', missingFields: [] },
  });
});

/**
 * Opens the page in a context holding the gateway's session cookie, like after sign-in, and
 * fails on any script error or console error (a CSP or Trusted Types violation is one).
 */
function onboarding(
  name: string,
  steps: (page: ChromiumPage) => Promise<void>,
  query = '',
): Promise<void> {
  return chromium.withPage(name, async (page, context) => {
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes('status of 4')) {
        problems.push(message.text());
      }
    });
    await context.addCookies([
      {
        name: 'svc_auth_session',
        value: 'the-gateway-session',
        domain: '127.0.0.1',
        path: '/',
        httpOnly: true,
        sameSite: 'Lax',
      },
    ]);
    await page.goto(
      `${identity.origin}/env/PROD/onboarding?platform=ACME_SHOP&resume=${transactionId}${query}`,
    );
    await page.locator('#onboarding-form').waitFor({ state: 'visible' });
    await steps(page);
    expect(problems).toEqual([]);
  });
}

/** Fills every required field with a valid answer. */
async function fillRequired(page: ChromiumPage): Promise<void> {
  await page.fill('#field-lastName', 'Lovelace');
  await page.fill('#field-phoneNumber', '+44 20 7946 0958');
  await page.fill('#field-residenceCountryCode', 'GB');
  await page.check('#field-newsletter-yes');
  await page.selectOption('#field-plan', 'basic');
  await page.fill('#field-contactEmail', 'ada@example.com');
}

const sent = (method: string, path: string) =>
  gateway.requests.filter((request) => request.method === method && request.url === path);
const errorOf = (page: ChromiumPage, fieldKey: string) => page.locator(`#field-${fieldKey}-error`);
const resumeUrl = () => `${gateway.origin}/v1/auth/resume?transaction=${transactionId}`;

describe('the onboarding page in Chromium', () => {
  it('renders a control per field type with labels, placeholders, help, sections and widths', async () => {
    await onboarding('renders controls', async (page) => {
      await expect(page.locator('h1').textContent()).resolves.toBe(
        'Complete your sign-up for Acme <Shop>',
      );
      await expect(page.title()).resolves.toBe('Complete your sign-up for Acme <Shop>');
      await expect(page.locator('h2').allTextContents()).resolves.toEqual([
        'About you',
        'Your company',
      ]);

      const firstName = page.getByLabel('First name');
      await expect(firstName.getAttribute('type')).resolves.toBe('text');
      await expect(firstName.getAttribute('placeholder')).resolves.toBe('Ada');
      await expect(firstName.getAttribute('autocomplete')).resolves.toBe('given-name');
      await expect(firstName.inputValue()).resolves.toBe('Ada'); // currentValue
      await expect(page.locator('#field-firstName-label').textContent()).resolves.toBe(
        'First name*',
      );
      await expect(page.locator('#field-firstName-help').textContent()).resolves.toBe(
        'As on your passport.',
      );
      await expect(firstName.getAttribute('aria-describedby')).resolves.toBe(
        'field-firstName-help field-firstName-error',
      );
      await expect(
        page.locator('[data-field-key="firstName"]').getAttribute('class'),
      ).resolves.toBe('field half');
      await expect(
        page.locator('[data-field-key="phoneNumber"]').getAttribute('class'),
      ).resolves.toBe('field third');
      await expect(page.locator('[data-field-key="bio"]').getAttribute('class')).resolves.toBe(
        'field full',
      );

      const types = await page.$$eval('[data-field-key]', (wrappers) =>
        wrappers.map((wrapper) => [
          wrapper.getAttribute('data-field-key'),
          wrapper.tagName.toLowerCase(),
          [...wrapper.querySelectorAll('input, select, textarea')].map((control) =>
            control.tagName === 'INPUT'
              ? control.getAttribute('type')
              : control.tagName.toLowerCase(),
          ),
        ]),
      );
      expect(types).toEqual([
        ['firstName', 'div', ['text']],
        ['lastName', 'div', ['text']],
        ['phoneNumber', 'div', ['tel']],
        ['residenceCountryCode', 'div', ['text']],
        ['dateOfBirth', 'div', ['date']],
        ['bio', 'div', ['textarea']],
        ['companySize', 'div', ['number']],
        ['newsletter', 'fieldset', ['radio', 'radio']],
        ['plan', 'div', ['select']],
        ['interests', 'fieldset', ['checkbox', 'checkbox', 'checkbox']],
        ['contactEmail', 'div', ['email']],
        ['website', 'div', ['url']],
      ]);
      await expect(page.getByLabel('Mobile phone').getAttribute('placeholder')).resolves.toBe(
        '+49 30 1234567',
      );
      await expect(page.getByLabel('Website').getAttribute('placeholder')).resolves.toBe(
        'https://',
      );
      await expect(page.getByLabel('Yes').isVisible()).resolves.toBe(true);
      await expect(page.locator('#field-newsletter-help').textContent()).resolves.toBe(
        'One e-mail a month.',
      );
      await expect(page.locator('#field-plan option').allTextContents()).resolves.toEqual([
        'Choose…',
        'Basic',
        'Professional',
      ]);
      await expect(page.getByLabel('User interface').getAttribute('value')).resolves.toBe('ui');
      await expect(page.getByLabel('Company size').getAttribute('min')).resolves.toBe('1');

      // Text from the gateway is text, never markup.
      await expect(page.locator('#field-bio-description').textContent()).resolves.toBe(
        '<b>Tell us</b> about yourself <img src=x onerror=alert(1)>',
      );
      await expect(page.locator('#field-bio-label').textContent()).resolves.toBe('About <you>');
      await expect(page.locator('main b, main img').count()).resolves.toBe(0);

      // The requirements were read with the gateway's cookie, from the page's origin.
      expect(sent('GET', '/v1/onboarding/ACME_SHOP/requirements')).toEqual([
        expect.objectContaining({ cookie: sessionCookie, origin: identity.origin }),
      ]);
    });
  });

  it('blocks bad values on the client and shows each message next to its field', async () => {
    await onboarding('client validation', async (page) => {
      await fillRequired(page);
      await page.fill('#field-lastName', '   ');
      await page.fill('#field-contactEmail', 'not-an-address');
      await page.fill('#field-phoneNumber', '0049 30');
      await page.getByRole('button', { name: 'Continue' }).click();

      await expect(errorOf(page, 'lastName').textContent()).resolves.toBe(
        'This field is required.',
      );
      await expect(errorOf(page, 'contactEmail').textContent()).resolves.toBe(
        'Must be an e-mail address.',
      );
      await expect(errorOf(page, 'phoneNumber').textContent()).resolves.toBe(
        'Must be an E.164 phone number: + then 7 to 15 digits.',
      );
      await expect(page.locator('#field-contactEmail').getAttribute('aria-invalid')).resolves.toBe(
        'true',
      );
      await expect(errorOf(page, 'plan').isHidden()).resolves.toBe(true);
      await expect(page.locator('#onboarding-alert').textContent()).resolves.toBe(
        'Check the fields marked below.',
      );
      // The first marked field in page order has the focus.
      await expect(page.locator(':focus').getAttribute('id')).resolves.toBe('field-lastName');
      expect(gateway.requests.map((request) => request.method)).toEqual(['GET']);

      // Fixing them clears the messages.
      await fillRequired(page);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(resumeUrl());
    });
  });

  it('sends exactly the normalised values, completes and resumes the sign-in', async () => {
    await onboarding('normalised values', async (page) => {
      await page.fill('#field-firstName', '  Ada  ');
      await page.fill('#field-lastName', ' Lovelace ');
      await page.fill('#field-phoneNumber', ' +44 (20) 7946-09.58 ');
      await page.fill('#field-residenceCountryCode', ' gb ');
      await page.fill('#field-bio', '   ');
      await page.fill('#field-companySize', '42');
      await page.check('#field-newsletter-no');
      await page.selectOption('#field-plan', 'pro');
      await page.fill('#field-contactEmail', 'ada@example.com');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(resumeUrl());
      await expect(page.locator('p').textContent()).resolves.toBe(
        'Resumed by the gateway stand-in',
      );
    });
    const [put] = sent('PUT', '/v1/onboarding/ACME_SHOP/values');
    expect(put).toEqual({
      method: 'PUT',
      url: '/v1/onboarding/ACME_SHOP/values',
      cookie: sessionCookie,
      origin: identity.origin,
      contentType: 'application/json',
      body: {
        requirementVersion: 7,
        values: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          phoneNumber: '+442079460958',
          residenceCountryCode: 'GB',
          dateOfBirth: null,
          bio: null,
          companySize: 42,
          newsletter: false,
          plan: 'pro',
          interests: [],
          contactEmail: 'ada@example.com',
          website: null,
        },
      },
    });
    expect(gateway.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /v1/onboarding/ACME_SHOP/requirements',
      'PUT /v1/onboarding/ACME_SHOP/values',
      'POST /v1/onboarding/ACME_SHOP/complete',
      `GET /v1/auth/resume?transaction=${transactionId}`,
    ]);
    expect(sent('POST', '/v1/onboarding/ACME_SHOP/complete')).toEqual([
      expect.objectContaining({
        cookie: sessionCookie,
        contentType: 'application/json',
        body: {},
      }),
    ]);
  });

  it('shows the gateway’s value errors next to the fields they name', async () => {
    gateway.reply('PUT /v1/onboarding/ACME_SHOP/values', {
      status: 400,
      body: {
        code: 'VALIDATION_ERROR',
        message: 'The onboarding values are not valid.',
        details: {
          issues: [
            { location: 'body', path: 'values.plan', message: 'Plan is sold out.' },
            {
              location: 'body',
              path: 'values.website',
              fieldKey: 'website',
              message: 'Website must not be a link shortener.',
            },
          ],
        },
      },
    });
    await onboarding('server 400', async (page) => {
      await fillRequired(page);
      await page.fill('#field-website', 'https://bit.ly/x');
      await page.getByRole('button', { name: 'Continue' }).click();
      await errorOf(page, 'plan').waitFor({ state: 'visible' });
      await expect(errorOf(page, 'plan').textContent()).resolves.toBe('Plan is sold out.');
      await expect(errorOf(page, 'website').textContent()).resolves.toBe(
        'Website must not be a link shortener.',
      );
      await expect(errorOf(page, 'lastName').isHidden()).resolves.toBe(true);
      await expect(page.locator('#onboarding-alert').textContent()).resolves.toBe(
        'Check the fields marked below.',
      );
      await expect(page.getByRole('button', { name: 'Continue' }).isEnabled()).resolves.toBe(true);
      expect(page.url()).toContain('/env/PROD/onboarding');
    });
    expect(sent('POST', '/v1/onboarding/ACME_SHOP/complete')).toEqual([]);
  });

  it('reloads the requirements when the schema changed (404), keeping what was entered', async () => {
    gateway.reply(
      'GET /v1/onboarding/ACME_SHOP/requirements',
      { status: 200, body: platformRequirements },
      {
        status: 200,
        body: {
          ...platformRequirements,
          requirementVersion: 8,
          requirements: [
            ...platformRequirements.requirements,
            field('vatNumber', { label: 'VAT number', placeholder: 'DE123456789' }),
          ],
        },
      },
    );
    gateway.reply(
      'PUT /v1/onboarding/ACME_SHOP/values',
      { status: 404, body: { code: 'NOT_FOUND', message: 'The onboarding schema changed.' } },
      { status: 200, body: { saved: true } },
    );
    await onboarding('schema changed', async (page) => {
      await fillRequired(page);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('VAT number').waitFor({ state: 'visible' });
      await expect(page.locator('#onboarding-notice').textContent()).resolves.toContain(
        'The questions changed while you were answering.',
      );
      await expect(page.getByLabel('Last name').inputValue()).resolves.toBe('Lovelace');
      await expect(page.locator('#field-newsletter-yes').isChecked()).resolves.toBe(true);
      await page.getByLabel('VAT number').fill('DE123456789');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(resumeUrl());
    });
    const puts = sent('PUT', '/v1/onboarding/ACME_SHOP/values');
    expect(
      puts.map((put) => (put.body as { requirementVersion: number }).requirementVersion),
    ).toEqual([7, 8]);
    expect((puts[1]?.body as { values: Record<string, unknown> }).values).toMatchObject({
      lastName: 'Lovelace',
      vatNumber: 'DE123456789',
    });
  });

  it('marks the fields that complete reports missing (409) and stays', async () => {
    gateway.reply('POST /v1/onboarding/ACME_SHOP/complete', {
      status: 409,
      body: {
        code: 'CONFLICT',
        message: 'Required onboarding fields are missing.',
        details: { missingFields: ['plan', 'contactEmail'] },
      },
    });
    await onboarding('complete 409', async (page) => {
      await fillRequired(page);
      await page.getByRole('button', { name: 'Continue' }).click();
      await errorOf(page, 'plan').waitFor({ state: 'visible' });
      await expect(errorOf(page, 'plan').textContent()).resolves.toBe('This field is required.');
      await expect(errorOf(page, 'contactEmail').textContent()).resolves.toBe(
        'This field is required.',
      );
      await expect(page.locator('#onboarding-alert').textContent()).resolves.toBe(
        'Some required fields are still missing.',
      );
      expect(page.url()).toContain('/env/PROD/onboarding');
    });
    expect(gateway.requests.some((request) => request.url.startsWith('/v1/auth/resume'))).toBe(
      false,
    );
  });

  it('shows the gateway’s message at the top when the requirements cannot be loaded', async () => {
    gateway.reply('GET /v1/onboarding/ACME_SHOP/requirements', {
      status: 401,
      body: { code: 'UNAUTHORIZED', message: 'Sign in again.' },
    });
    await chromium.withPage('requirements 401', async (page) => {
      await page.goto(
        `${identity.origin}/env/PROD/onboarding?platform=ACME_SHOP&resume=${transactionId}`,
      );
      await page.locator('#onboarding-alert').waitFor({ state: 'visible' });
      await expect(page.locator('#onboarding-alert').textContent()).resolves.toBe('Sign in again.');
      await expect(page.locator('#onboarding-form').isHidden()).resolves.toBe(true);
    });
  });
});

describe('the global profile step (scope=global)', () => {
  beforeEach(() => {
    gateway.reply('GET /v1/onboarding/global/requirements', {
      status: 200,
      body: { requirementVersion: 3, requirements: globalFields },
    });
    gateway.reply('PUT /v1/onboarding/global/values', { status: 200, body: { saved: true } });
  });

  it('saves to the global endpoints and continues only once the global status is COMPLETE', async () => {
    gateway.reply(
      'GET /v1/onboarding/global/status',
      { status: 200, body: { status: 'INCOMPLETE', missingFields: ['phoneNumber'] } },
      { status: 200, body: { status: 'COMPLETE', missingFields: [] } },
    );
    await onboarding(
      'global scope',
      async (page) => {
        await expect(page.locator('h1').textContent()).resolves.toBe('Complete your profile');
        await expect(page.locator('[data-field-key]').count()).resolves.toBe(globalFields.length);
        await page.fill('#field-lastName', 'Lovelace');
        await page.fill('#field-phoneNumber', '+44 20 7946 0958');
        await page.fill('#field-residenceCountryCode', 'gb');
        await page.getByRole('button', { name: 'Continue' }).click();
        await errorOf(page, 'phoneNumber').waitFor({ state: 'visible' });
        await expect(errorOf(page, 'phoneNumber').textContent()).resolves.toBe(
          'This field is required.',
        );
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(resumeUrl());
      },
      '&scope=global',
    );
    expect(gateway.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /v1/onboarding/global/requirements',
      'PUT /v1/onboarding/global/values',
      'GET /v1/onboarding/global/status',
      'PUT /v1/onboarding/global/values',
      'GET /v1/onboarding/global/status',
      `GET /v1/auth/resume?transaction=${transactionId}`,
    ]);
    expect(sent('PUT', '/v1/onboarding/global/values')[0]?.body).toEqual({
      requirementVersion: 3,
      values: {
        firstName: 'Ada',
        lastName: 'Lovelace',
        phoneNumber: '+442079460958',
        residenceCountryCode: 'GB',
        dateOfBirth: null,
        bio: null,
      },
    });
  });
});
