import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScriptedOnboarding } from './testing/scripted-onboarding.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// Spec 4.2 step 8 and 4.3: the login stops for onboarding and resumes once nothing
// required is missing. Field definitions arrive with the onboarding issue, so this test
// scripts what the onboarding service reports (a stand-in implementing its real contract).
const scripted = createScriptedOnboarding();
const { missing } = scripted;

let t: GatewayUnderTest;
const keys: Record<string, IssuedKey> = {};

beforeAll(async () => {
  t = await startGatewayUnderTest({}, {}, { onboardingRoutes: scripted.routes });
  for (const [platformKey, mode, port] of [
    ['CENTRAL_APP', 'central', 3100],
    ['OWN_APP', 'platform', 3200],
  ] as const) {
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey,
        displayName: platformKey,
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
});

afterAll(async () => {
  await t.close();
});

function onboardingPage(location: string | null) {
  const url = new URL(location ?? '');
  return { url, base: `${url.origin}${url.pathname}`, query: Object.fromEntries(url.searchParams) };
}

describe('onboarding stops the login', () => {
  it('sends a user with a missing global field to the global step in every mode, then resumes to the platform', async () => {
    const steps = loginSteps(t);
    missing.global = ['firstName'];
    missing.platform = [];
    const { landed } = await steps.signIn(t.provider, 'OWN_APP', '/');
    const page = onboardingPage(landed.location);
    expect(page.base).toBe(`${new URL(t.provider.issuer).origin}/env/PROD/onboarding`);
    expect(page.query).toEqual({
      platform: 'OWN_APP',
      resume: expect.any(String),
      scope: 'global',
    });
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(landed.headers).token)}`;

    // Still missing: resume sends the browser back to the global step (server-side evaluation).
    const stillMissing = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(onboardingPage(stillMissing.location).query.scope).toBe('global');

    missing.global = [];
    const resumed = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    expect(resumed.status).toBe(302);
    const code = handoffCodeOf(resumed.location);
    expect(code).toMatch(/^handoff_/);
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
      profile: { status: 'COMPLETE' },
    });
  });

  it('in central mode, sends a user with a missing platform field to the platform step', async () => {
    const steps = loginSteps(t);
    missing.platform = ['membershipNumber'];
    const { landed } = await steps.signIn(t.provider, 'CENTRAL_APP', '/');
    const page = onboardingPage(landed.location);
    expect(page.query).toEqual({ platform: 'CENTRAL_APP', resume: expect.any(String) });
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(landed.headers).token)}`;
    missing.platform = [];
    const resumed = await steps.browserGet(
      `/v1/auth/resume?transaction=${page.query.resume}`,
      cookie,
    );
    const exchanged = await steps.exchange(
      keys.CENTRAL_APP as IssuedKey,
      handoffCodeOf(resumed.location),
    );
    expect(exchanged.body).toMatchObject({
      onboarding: { status: 'COMPLETE', missingFields: [], canCompleteCentrally: true },
    });
  });

  it('in platform mode, hands off with IN_PROGRESS and the missing platform fields', async () => {
    const steps = loginSteps(t);
    missing.platform = ['membershipNumber'];
    const { landed } = await steps.signIn(t.provider, 'OWN_APP', '/');
    const exchanged = await steps.exchange(
      keys.OWN_APP as IssuedKey,
      handoffCodeOf(landed.location),
    );
    expect(exchanged.body).toMatchObject({
      onboarding: {
        status: 'IN_PROGRESS',
        missingFields: ['membershipNumber'],
        canCompleteCentrally: false,
      },
    });
    missing.platform = [];
  });

  it('resume refuses an unknown transaction and accepts another session of the same user', async () => {
    const steps = loginSteps(t);
    missing.global = ['firstName'];
    const first = await steps.signIn(t.provider, 'OWN_APP', '/');
    const transaction = onboardingPage(first.landed.location).query.resume;
    missing.global = [];
    const second = await steps.signIn(t.provider, 'OWN_APP', '/');
    // Same user, another session: the transaction is still theirs; a bogus id is not.
    const cookie = `svc_auth_session=${encodeURIComponent(sessionCookieOf(second.landed.headers).token)}`;
    const unknown = await steps.browserGet(
      '/v1/auth/resume?transaction=00000000-0000-4000-8000-000000000000',
      cookie,
    );
    expect(unknown.status).toBe(404);
    const resumed = await steps.browserGet(`/v1/auth/resume?transaction=${transaction}`, cookie);
    expect(resumed.status).toBe(302);
  });
});
