import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 4.2 steps 6 and 8, 4.3, 4.4 and 3.7 with real field definitions: the login stops for
// a required global field in every mode and, in central mode, for a required platform
// field; the user fills them through the 4.9 endpoints with the gateway cookie (as the
// identity UI's onboarding page does), and resume hands off with the status of 3.7.

const ACCOUNTS = ['alice', 'bob', 'carol', 'dave'];

let t: GatewayUnderTest;
const keys: Record<string, IssuedKey> = {};

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      accounts: ACCOUNTS.map((accountId) => ({
        accountId,
        email: `${accountId}@example.test`,
        emailVerified: true,
      })),
    },
  );
  for (const [platformKey, mode, port] of [
    ['CENTRAL_APP', 'central', 3100],
    ['OWN_APP', 'platform', 3200],
  ] as const) {
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey,
        displayName: `${platformKey} display`,
        defaultOnboardingMode: mode,
        centralOnboardingEnabled: mode === 'central',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: `http://localhost:${port}/`,
            callbackUrl: `http://localhost:${port}/cb`,
            isDefault: true,
          },
        ],
      },
    });
    keys[platformKey] = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
  }
  // Spec 4.13: nothing is required until turned on; from here on every login needs a name.
  const global = await t.call('POST', '/v1/admin/onboarding/global-fields', {
    body: { profileFieldKey: 'firstName', label: 'First name', fieldType: 'TEXT', required: true },
  });
  expect(global.status).toBe(201);
  const field = await t.call('POST', '/v1/platforms/CENTRAL_APP/onboarding/fields', {
    body: {
      fieldKey: 'membershipNumber',
      label: 'Membership number',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
      required: true,
      validation: { pattern: '^M[0-9]{4}$' },
    },
  });
  expect(field.status).toBe(201);
});

afterAll(async () => {
  await t.close();
});

function onboardingPage(location: string | null) {
  const url = new URL(location ?? '');
  return { url, base: `${url.origin}${url.pathname}`, query: Object.fromEntries(url.searchParams) };
}

/** A user call with the gateway cookie, from an allowlisted Origin (the identity UI's). */
function asCookieUser(cookie: string) {
  return (method: string, path: string, body?: unknown) =>
    t.call(method, path, {
      token: null,
      headers: { cookie, origin: new URL(t.provider.issuer).origin },
      ...(body === undefined ? {} : { body }),
    });
}

describe('onboarding stops the login', () => {
  it('sends a user with a missing global field to the global step in every mode, then resumes to the platform', async () => {
    const steps = loginSteps(t);
    const { landed } = await steps.signIn(t.provider, 'OWN_APP', '/', 'alice');
    const page = onboardingPage(landed.location);
    expect(page.base).toBe(`${new URL(t.provider.issuer).origin}/env/PROD/onboarding`);
    expect(page.query).toEqual({
      platform: 'OWN_APP',
      resume: expect.any(String),
      scope: 'global',
    });
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(landed.headers).token)}`;
    const user = asCookieUser(cookie);

    // Still missing: resume sends the browser back to the global step (server-side evaluation).
    const stillMissing = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(onboardingPage(stillMissing.location).query.scope).toBe('global');
    expect((await user('GET', '/v1/onboarding/global/status')).body).toEqual({
      status: 'INCOMPLETE',
      missingFields: ['firstName'],
      requirementVersion: 1,
    });

    // Spec 5: a cookie write without an allowlisted Origin is refused and saves nothing.
    const noOrigin = await t.call('PUT', '/v1/onboarding/global/values', {
      token: null,
      headers: { cookie },
      body: { values: { firstName: 'Alice' } },
    });
    expect(noOrigin.status).toBe(403);
    const saved = await user('PUT', '/v1/onboarding/global/values', {
      requirementVersion: 1,
      values: { firstName: 'Alice' },
    });
    expect(saved.body).toEqual({ status: 'COMPLETE', missingFields: [], requirementVersion: 1 });

    const resumed = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(resumed.status).toBe(302);
    const code = handoffCodeOf(resumed.location);
    // Spec 4.3: a second handoff for the same transaction is a conflict.
    const again = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(again.status).toBe(409);
    expect(JSON.parse(again.text).code).toBe('CONFLICT');
    const exchanged = await steps.exchange(keys.OWN_APP as IssuedKey, code);
    expect(exchanged.body).toMatchObject({
      platform: { key: 'OWN_APP' },
      onboarding: { status: 'COMPLETE', requirementVersion: 0, missingFields: [] },
      profile: { status: 'COMPLETE', missingFields: [] },
    });
  });

  it('in central mode, runs the global step, then the platform step, then hands off COMPLETE', async () => {
    const steps = loginSteps(t);
    const { landed } = await steps.signIn(t.provider, 'CENTRAL_APP', '/', 'bob');
    const globalPage = onboardingPage(landed.location);
    expect(globalPage.query.scope).toBe('global');
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(landed.headers).token)}`;
    const user = asCookieUser(cookie);
    await user('PUT', '/v1/onboarding/global/values', { values: { firstName: 'Bob' } });

    const platformStep = await steps.browserGet(
      `/v1/auth/resume?transaction=${globalPage.query.resume}`,
      cookie,
    );
    const page = onboardingPage(platformStep.location);
    expect(page.query).toEqual({ platform: 'CENTRAL_APP', resume: globalPage.query.resume });

    const requirements = await user('GET', '/v1/onboarding/CENTRAL_APP/requirements');
    expect(requirements.body).toMatchObject({
      platformKey: 'CENTRAL_APP',
      platformDisplayName: 'CENTRAL_APP display',
      requirementVersion: 1,
      requirements: [
        { scope: 'GLOBAL', platformId: null, fieldKey: 'firstName', currentValue: 'Bob' },
        { scope: 'PLATFORM', fieldKey: 'membershipNumber', currentValue: null },
      ],
    });
    // Completing too early is a conflict naming what is missing (spec 3.7).
    const early = await user('POST', '/v1/onboarding/CENTRAL_APP/complete');
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({
      code: 'CONFLICT',
      details: { missingFields: ['membershipNumber'] },
    });
    const bad = await user('PUT', '/v1/onboarding/CENTRAL_APP/values', {
      requirementVersion: 1,
      values: { membershipNumber: 'X1' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ fieldKey: 'membershipNumber', path: 'values.membershipNumber' }] },
    });
    // Resume never trusts the client: still missing, back to the platform step.
    const notYet = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(onboardingPage(notYet.location).query).toEqual(page.query);

    const good = await user('PUT', '/v1/onboarding/CENTRAL_APP/values', {
      requirementVersion: 1,
      values: { membershipNumber: 'M1234' },
    });
    expect(good.body).toMatchObject({ status: 'IN_PROGRESS', missingFields: [] });
    const completed = await user('POST', '/v1/onboarding/CENTRAL_APP/complete');
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({
      platformKey: 'CENTRAL_APP',
      status: 'COMPLETE',
      missingFields: [],
      completedAt: expect.any(String),
      global: { status: 'COMPLETE', missingFields: [] },
    });
    const resumed = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    const exchanged = await steps.exchange(
      keys.CENTRAL_APP as IssuedKey,
      handoffCodeOf(resumed.location),
    );
    expect(exchanged.body).toMatchObject({
      onboarding: {
        status: 'COMPLETE',
        requirementVersion: 1,
        missingFields: [],
        canCompleteCentrally: true,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
    });
  });

  it('in platform mode, hands off with the missing platform fields; a schema change reopens a COMPLETE membership and the next login records COMPLETE again', async () => {
    const steps = loginSteps(t);
    const created = await t.call('POST', '/v1/platforms/OWN_APP/onboarding/fields', {
      body: {
        fieldKey: 'favouriteColour',
        label: 'Favourite colour',
        fieldType: 'SELECT',
        source: 'CUSTOM_FIELD',
        required: true,
        options: [
          { value: 'red', label: 'Red' },
          { value: 'blue', label: 'Blue' },
        ],
      },
    });
    expect(created.status).toBe(201);
    const first = await steps.signIn(t.provider, 'OWN_APP', '/', 'carol');
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(first.landed.headers).token)}`;
    const user = asCookieUser(cookie);
    await user('PUT', '/v1/onboarding/global/values', { values: { firstName: 'Carol' } });
    const transaction = onboardingPage(first.landed.location).query.resume;
    const resumed = await steps.browserGet(`/v1/auth/resume?transaction=${transaction}`, cookie);
    // Platform mode: no platform step; the platform learns what is missing from the exchange.
    const exchanged = await steps.exchange(
      keys.OWN_APP as IssuedKey,
      handoffCodeOf(resumed.location),
    );
    expect(exchanged.body).toMatchObject({
      onboarding: {
        status: 'NOT_STARTED',
        requirementVersion: 1,
        missingFields: ['favouriteColour'],
        canCompleteCentrally: false,
      },
    });

    // The platform collects the value in its own UI and saves it with the gateway token.
    const gatewayToken = (exchanged.body.session as { gatewayToken: string }).gatewayToken;
    const platformUser = asCookieUser(`svc_auth_session=${encodeURIComponent(gatewayToken)}`);
    const saved = await platformUser('PUT', '/v1/onboarding/OWN_APP/values', {
      values: { favouriteColour: 'blue' },
    });
    expect(saved.body).toMatchObject({ status: 'IN_PROGRESS', missingFields: [] });
    expect((await platformUser('POST', '/v1/onboarding/OWN_APP/complete')).body).toMatchObject({
      status: 'COMPLETE',
    });

    // Spec 3.6: any change of the platform's schema moves COMPLETE memberships to IN_PROGRESS.
    const patched = await t.call(
      'PATCH',
      '/v1/platforms/OWN_APP/onboarding/fields/favouriteColour',
      {
        body: { label: 'Colour' },
      },
    );
    expect(patched.status).toBe(200);
    expect((await platformUser('GET', '/v1/onboarding/OWN_APP/status')).body).toMatchObject({
      status: 'IN_PROGRESS',
      missingFields: [],
      requirementVersion: 2,
      completedAt: null,
    });

    // Spec 3.7: a login with nothing required missing records COMPLETE by itself.
    const second = await steps.signIn(t.provider, 'OWN_APP', '/', 'carol');
    const again = await steps.exchange(
      keys.OWN_APP as IssuedKey,
      handoffCodeOf(second.landed.location),
    );
    expect(again.body).toMatchObject({
      onboarding: { status: 'COMPLETE', requirementVersion: 2, missingFields: [] },
    });
  });

  it('resume refuses an unknown transaction and accepts another session of the same user', async () => {
    const steps = loginSteps(t);
    const first = await steps.signIn(t.provider, 'CENTRAL_APP', '/', 'dave');
    const transaction = onboardingPage(first.landed.location).query.resume;
    const firstCookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(first.landed.headers).token)}`;
    await asCookieUser(firstCookie)('PUT', '/v1/onboarding/CENTRAL_APP/values', {
      values: { firstName: 'Dave', membershipNumber: 'M0001' },
    });
    const second = await steps.signIn(t.provider, 'CENTRAL_APP', '/', 'dave');
    // Nothing missing any more: the second login hands off at once.
    expect(handoffCodeOf(second.landed.location)).toMatch(/^handoff_/);
    // Same user, another session: the first transaction is still theirs; a bogus id is not.
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(second.landed.headers).token)}`;
    const unknown = await steps.browserGet(
      '/v1/auth/resume?transaction=00000000-0000-4000-8000-000000000000',
      cookie,
    );
    expect(unknown.status).toBe(404);
    const resumed = await steps.browserGet(`/v1/auth/resume?transaction=${transaction}`, cookie);
    expect(resumed.status).toBe(302);
    expect(handoffCodeOf(resumed.location)).toMatch(/^handoff_/);
  });
});
