import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, type BrowserAnswer, type LoginSteps } from './testing/login-steps.js';

// Spec 4.2 steps 2 and 3 over real HTTP, with real OpenID Providers (real discovery, real
// signing keys): what the callback refuses in the authorization response (RFC 9207 `iss`) and
// in the ID token (audience, authorized party, issue time).

type Claims = Record<string, unknown>;

let t: GatewayUnderTest;
let steps: LoginSteps;
/** A provider whose discovery does not advertise RFC 9207 (its responses still carry iss). */
let quiet: TestOpenIdProvider;
/** How the deployment provider rewrites its next ID tokens (none: as issued). */
let rewriteIdToken: ((claims: Claims) => Claims) | undefined;

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    { idTokenClaims: (claims) => rewriteIdToken?.(claims) ?? claims },
  );
  steps = loginSteps(t);
  quiet = await startTestOpenIdProvider({
    environmentKey: 'QUIET',
    omitAuthorizationResponseIssSupport: true,
  });
  const environment = await t.call('POST', '/v1/identity-environments', {
    body: {
      environmentKey: 'QUIET',
      displayName: 'Quiet',
      tier: 'development',
      issuer: quiet.issuer,
      oidcClientId: 'test-gateway',
      oidcClientSecret: quiet.clients.find((client) => client.clientId === 'test-gateway')
        ?.clientSecret,
    },
  });
  expect(environment.status).toBe(201);
  for (const [platformKey, port, identityEnvironmentKey] of [
    ['SHOP', 3000, 'PROD'],
    ['QUIET_SHOP', 3100, 'QUIET'],
  ] as const) {
    const created = await t.call('POST', '/v1/platforms', {
      body: {
        platformKey,
        displayName: platformKey,
        identityEnvironmentKey,
        redirectPairs: [
          {
            label: 'web',
            returnUrl: `http://localhost:${port}/`,
            callbackUrl: `http://localhost:${port}/auth/callback`,
            isDefault: true,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await t.close();
  await quiet.close();
});

/** Start, then sign in at the provider: the gateway callback URL the provider sends back. */
async function providerRedirect(provider: TestOpenIdProvider, platformKey: string): Promise<URL> {
  const start = await steps.browserGet(`/v1/auth/start?platformKey=${platformKey}&returnTo=%2F`);
  expect(start.status).toBe(302);
  return provider.browser().signIn(start.location ?? '', 'user-1');
}

const callbackWith = (redirect: URL, change: (query: URLSearchParams) => void) => {
  const query = new URLSearchParams(redirect.search);
  change(query);
  return steps.browserGet(`/v1/auth/callback?${query.toString()}`);
};

function expectHandoff(answer: BrowserAnswer, port: number) {
  expect(answer.status).toBe(302);
  expect(answer.location).toMatch(new RegExp(`^http://localhost:${port}/auth/callback\\?code=`));
}

function expectRefused(answer: BrowserAnswer, code = 'ID_TOKEN_INVALID') {
  expect(answer.status).toBe(401);
  expect((JSON.parse(answer.text) as { code: string }).code).toBe(code);
  expect(answer.headers.getSetCookie()).toEqual([]);
}

describe('the ID token (spec 4.2 step 3)', () => {
  it('an ID token as issued is accepted', async () => {
    rewriteIdToken = undefined;
    expectHandoff((await steps.signIn(t.provider, 'SHOP', '/')).landed, 3000);
  });

  it.each<[string, (claims: Claims) => Claims]>([
    ['with a second audience', (claims) => ({ ...claims, aud: [claims.aud, 'another-client'] })],
    ['whose azp names another client', (claims) => ({ ...claims, azp: 'another-client' })],
    ['issued a day in the future', (claims) => ({ ...claims, iat: Number(claims.iat) + 86_400 })],
  ])('an ID token %s is refused with 401 ID_TOKEN_INVALID', async (_name, rewrite) => {
    rewriteIdToken = rewrite;
    try {
      expectRefused((await steps.signIn(t.provider, 'SHOP', '/')).landed);
    } finally {
      rewriteIdToken = undefined;
    }
  });
});

describe('the authorization response issuer (RFC 9207)', () => {
  it('a provider that advertises it sends iss, and the matching iss is accepted', async () => {
    const redirect = await providerRedirect(t.provider, 'SHOP');
    expect(redirect.searchParams.get('iss')).toBe(t.provider.issuer);
    expectHandoff(await callbackWith(redirect, () => undefined), 3000);
  });

  it('a mismatching iss is refused with 401 ID_TOKEN_INVALID', async () => {
    const redirect = await providerRedirect(t.provider, 'SHOP');
    expectRefused(await callbackWith(redirect, (query) => query.set('iss', quiet.issuer)));
  });

  it('a missing iss is refused when discovery advertises it', async () => {
    const redirect = await providerRedirect(t.provider, 'SHOP');
    expectRefused(await callbackWith(redirect, (query) => query.delete('iss')));
  });

  it('without the advertisement a missing iss is accepted, a mismatching one still refused', async () => {
    const missing = await providerRedirect(quiet, 'QUIET_SHOP');
    expectHandoff(await callbackWith(missing, (query) => query.delete('iss')), 3100);
    const mismatching = await providerRedirect(quiet, 'QUIET_SHOP');
    expectRefused(await callbackWith(mismatching, (query) => query.set('iss', t.provider.issuer)));
  });
});
