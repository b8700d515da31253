import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestTokenIssuer, type TestTokenIssuer } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 5 over real HTTP: a Bearer access token of the deployment environment that is signed
// with its published key, for the right audience and with the admin scope, is still refused
// when it claims to be issued in the future, lives longer than the gateway allows, or is not
// an access token by its type. The deployment issuer is a token issuer the test controls.

const MAX_LIFETIME_SECONDS = 600;
const YEAR_SECONDS = 365 * 86_400;

let t: GatewayUnderTest;
let issuer: TestTokenIssuer;

type Claims = Parameters<TestTokenIssuer['sign']>[0];

beforeAll(async () => {
  issuer = await startTestTokenIssuer({ alg: 'ES256' });
  t = await startGatewayUnderTest({
    IDENTITY_ISSUER: issuer.issuer,
    ACCESS_TOKEN_MAX_LIFETIME_SECONDS: String(MAX_LIFETIME_SECONDS),
  });
});

afterAll(async () => {
  await t.close();
  await issuer.close();
});

const now = () => Math.floor(Date.now() / 1000);

/** A deployment machine token with platforms:admin, with `extra` claims on top. */
function machineToken(extra: Claims = {}, typ?: string): Promise<string> {
  return issuer.sign(
    {
      sub: 'admin-machine',
      client_id: 'admin-machine',
      aud: t.config.accessTokenAudience,
      scope: 'platforms:admin',
      ...extra,
    },
    typ === undefined ? {} : { typ },
  );
}

async function adminListStatus(token: string) {
  const answer = await t.call('GET', '/v1/platforms', { token });
  return { status: answer.status, code: answer.body.code };
}

describe('Bearer access tokens the admin API refuses', () => {
  it('accepts a well-formed admin token, typed at+jwt or untyped', async () => {
    expect((await adminListStatus(await machineToken({}, 'at+jwt'))).status).toBe(200);
    expect((await adminListStatus(await machineToken())).status).toBe(200);
  });

  it.each<[string, () => Promise<string>]>([
    ['issued a year in the future', () => machineToken({ iat: now() + YEAR_SECONDS })],
    ['valid for ten years', () => machineToken({ iat: now(), exp: now() + 10 * YEAR_SECONDS })],
    [
      'living longer than ACCESS_TOKEN_MAX_LIFETIME_SECONDS',
      () => machineToken({ iat: now(), exp: now() + MAX_LIFETIME_SECONDS + 60 }),
    ],
    ['typed logout+jwt', () => machineToken({}, 'logout+jwt')],
  ])('answers 401 UNAUTHORIZED to a token %s', async (_name, token) => {
    expect(await adminListStatus(await token())).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });
});
