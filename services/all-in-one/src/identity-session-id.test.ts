import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf, type IssuedKey } from './testing/login-steps.js';

// OpenID Connect Back-Channel Logout 1.0 §2.1, §2.4: a session records the `sid` of the ID
// token its user signed in with, the identity provider's session a logout token names. Only a
// string `sid` is recorded. The provider here sets each account's `sid` in its ID tokens.

const SIDS: Record<string, unknown> = { 'user-1': 'op-session-1', 'user-2': 42 };

let t: GatewayUnderTest;
let key: IssuedKey;

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      accounts: ['user-1', 'user-2', 'user-3'].map((accountId) => ({
        accountId,
        email: `${accountId}@example.test`,
        emailVerified: true,
      })),
      idTokenClaims: (claims) => {
        const rewritten = { ...claims };
        delete rewritten.sid;
        const sid = SIDS[String(claims.sub)];
        return sid === undefined ? rewritten : { ...rewritten, sid };
      },
    },
  );
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/cb',
          isDefault: true,
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  key = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
});

afterAll(async () => {
  await t.close();
});

/** Signs the account in; answers what its session records as the identity session id. */
async function identitySessionIdAfterSignIn(accountId: string): Promise<unknown> {
  const steps = loginSteps(t);
  const { landed } = await steps.signIn(t.provider, 'SHOP', '/', accountId);
  expect(landed.status).toBe(302);
  const introspected = await steps.introspect(key, sessionCookieOf(landed.headers).token);
  expect(introspected.body.active).toBe(true);
  const row = (await t.db
    .knex('authflow.sessions')
    .where({ id: introspected.body.sessionId })
    .first('identity_session_id')) as { identity_session_id: string | null } | undefined;
  return row?.identity_session_id;
}

describe('the identity session id of a sign-in', () => {
  it("records the ID token's string sid", async () => {
    expect(await identitySessionIdAfterSignIn('user-1')).toBe('op-session-1');
  });

  it('records none for a sid that is not a string, or an ID token without one', async () => {
    expect(await identitySessionIdAfterSignIn('user-2')).toBeNull();
    expect(await identitySessionIdAfterSignIn('user-3')).toBeNull();
  });
});
