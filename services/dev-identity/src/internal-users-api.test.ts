import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, type JWTPayload } from 'jose';
import {
  gatewayClient,
  signInAndExchange,
  startAuthorization,
  startDevIdentity,
  submitAndFollow,
  testServiceKey,
  tokenRequest,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

let identity: RunningDevIdentity;
beforeAll(async () => {
  identity = await startDevIdentity();
});
afterAll(() => identity.close());

const now = () => Math.floor(Date.now() / 1000);

/** The gateway's service token (spec 4.15), with any claim overridden or left out. */
function serviceToken(
  claims: JWTPayload = {},
  options: { key?: string; alg?: string } = {},
): Promise<string> {
  const payload: JWTPayload = {
    iss: 'svc-gateway',
    aud: 'svc-identity',
    env: 'PROD',
    act: 'users.*',
    iat: now(),
    exp: now() + 60,
    ...claims,
  };
  for (const [name, value] of Object.entries(payload)) {
    if (value === undefined) delete payload[name];
  }
  return new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .sign(new TextEncoder().encode(options.key ?? testServiceKey));
}

function callApi(
  path: string,
  token: string | undefined,
  target: RunningDevIdentity = identity,
  method = 'POST',
): Promise<Response> {
  return fetch(`${target.origin}/internal/v1${path}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
}

const subjectOf = (environmentKey: string, email: string) =>
  identity.service.accounts(environmentKey).find((account) => account.email === email)
    ?.subject as string;

/** Signs in with offline_access, so there is an identity session and a refresh token. */
async function signInWithRefreshToken(issuer: string, email: string, password: string) {
  const { browser, tokens } = await signInAndExchange({
    issuer,
    email,
    password,
    scope: 'openid email offline_access',
    extra: { prompt: 'consent' },
  });
  expect(typeof tokens.refresh_token).toBe('string');
  return { browser, refreshToken: tokens.refresh_token as string };
}

const refresh = (issuer: string, refreshToken: string) =>
  tokenRequest(issuer, gatewayClient, { grant_type: 'refresh_token', refresh_token: refreshToken });

describe('POST /internal/v1/environments/{key}/users/{sub}/suspend', () => {
  it('suspends the account: 204, sign-in refused, identity session and refresh token revoked', async () => {
    const issuer = identity.issuer('PROD');
    const { browser, refreshToken } = await signInWithRefreshToken(
      issuer,
      'bob@example.com',
      'bob-password',
    );
    const before = await refresh(issuer, refreshToken);
    expect(before.status).toBe(200);
    const rotated = (before.body.refresh_token as string | undefined) ?? refreshToken;

    const sub = subjectOf('PROD', 'bob@example.com');
    const response = await callApi(
      `/environments/PROD/users/${sub}/suspend`,
      await serviceToken({ act: 'users.suspend' }),
    );
    expect(response.status).toBe(204);
    expect(identity.service.accounts('PROD')).toContainEqual(
      expect.objectContaining({ subject: sub, status: 'suspended' }),
    );

    const after = await refresh(issuer, rotated);
    expect(after.status).toBe(400);
    expect(after.body.error).toBe('invalid_grant');

    // The browser's identity session is gone: the authorization stops at the sign-in page...
    const again = await startAuthorization(browser, { issuer });
    expect(again.response.status).toBe(200);
    const page = await again.response.text();
    expect(page).toContain('<h1>Sign in</h1>');
    // ...where the account is refused.
    const result = await submitAndFollow(
      browser,
      { url: again.url, page, redirectUri: again.redirectUri },
      'login',
      { email: 'bob@example.com', password: 'bob-password' },
    );
    expect(result.callback).toBeUndefined();
    expect(result.response.status).toBe(403);
    expect(await result.response.text()).toContain('This account is suspended');

    // Repeating is harmless.
    const repeated = await callApi(`/environments/PROD/users/${sub}/suspend`, await serviceToken());
    expect(repeated.status).toBe(204);
  });

  it('answers 404 IDENTITY_USER_NOT_FOUND for a subject the environment does not have', async () => {
    const partnerAlice = subjectOf('PARTNER', 'alice@example.com');
    for (const sub of ['00000000-0000-4000-8000-000000000000', partnerAlice]) {
      const response = await callApi(
        `/environments/PROD/users/${sub}/suspend`,
        await serviceToken(),
      );
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        code: 'IDENTITY_USER_NOT_FOUND',
        message: expect.any(String),
      });
    }
    expect(identity.service.accounts('PARTNER')).toContainEqual(
      expect.objectContaining({ subject: partnerAlice, status: 'active' }),
    );
  });

  it('answers 401 UNAUTHORIZED for a token it must refuse, and changes nothing', async () => {
    const sub = subjectOf('PROD', 'alice@example.com');
    const refused: Record<string, Promise<string> | undefined> = {
      'no token': undefined,
      'bad signature': serviceToken({}, { key: 'another-key-of-at-least-32-characters!!' }),
      'HS512 instead of HS256': serviceToken({}, { alg: 'HS512' }),
      'wrong audience': serviceToken({ aud: 'svc-other' }),
      'wrong issuer': serviceToken({ iss: 'svc-someone' }),
      'another environment': serviceToken({ env: 'PARTNER' }),
      'no environment': serviceToken({ env: undefined }),
      'another action': serviceToken({ act: 'users.sessions.revoke' }),
      expired: serviceToken({ iat: now() - 120, exp: now() - 60 }),
      'lifetime over 60 seconds': serviceToken({ exp: now() + 61 }),
      'no iat': serviceToken({ iat: undefined }),
    };
    for (const [name, token] of Object.entries(refused)) {
      const response = await callApi(
        `/environments/PROD/users/${sub}/suspend`,
        token === undefined ? undefined : await token,
      );
      expect({ name, status: response.status }).toEqual({ name, status: 401 });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(((await response.json()) as { code: string }).code).toBe('UNAUTHORIZED');
    }
    expect(identity.service.accounts('PROD')).toContainEqual(
      expect.objectContaining({ subject: sub, status: 'active' }),
    );
  });

  it('answers 405 to other methods', async () => {
    const sub = subjectOf('PROD', 'alice@example.com');
    const response = await callApi(
      `/environments/PROD/users/${sub}/suspend`,
      await serviceToken(),
      identity,
      'GET',
    );
    expect(response.status).toBe(405);
  });
});

describe('POST /internal/v1/environments/{key}/users/{sub}/sessions/revoke', () => {
  it('revokes the identity session and refresh tokens but leaves the account active', async () => {
    const issuer = identity.issuer('PARTNER');
    const { browser, refreshToken } = await signInWithRefreshToken(
      issuer,
      'alice@example.com',
      'alice-partner-password',
    );
    const sub = subjectOf('PARTNER', 'alice@example.com');
    const response = await callApi(
      `/environments/PARTNER/users/${sub}/sessions/revoke`,
      await serviceToken({ env: 'PARTNER', act: 'users.sessions.revoke' }),
    );
    expect(response.status).toBe(204);

    expect((await refresh(issuer, refreshToken)).body.error).toBe('invalid_grant');
    const again = await startAuthorization(browser, { issuer });
    expect(await again.response.text()).toContain('<h1>Sign in</h1>');
    // Still active: signing in again works.
    await signInAndExchange({
      issuer,
      email: 'alice@example.com',
      password: 'alice-partner-password',
      browser,
    });
  });

  it('does not touch the same address in another environment', async () => {
    const prodIssuer = identity.issuer('PROD');
    const { refreshToken } = await signInWithRefreshToken(
      prodIssuer,
      'alice@example.com',
      'alice-password',
    );
    const partnerSub = subjectOf('PARTNER', 'alice@example.com');
    const response = await callApi(
      `/environments/PARTNER/users/${partnerSub}/sessions/revoke`,
      await serviceToken({ env: 'PARTNER' }),
    );
    expect(response.status).toBe(204);
    expect((await refresh(prodIssuer, refreshToken)).status).toBe(200);
  });
});

describe('without IDENTITY_SERVICE_KEY', () => {
  it('answers 503 IDENTITY_SERVICE_NOT_CONFIGURED', async () => {
    const keyless = await startDevIdentity({ serviceKey: undefined });
    try {
      const sub = keyless.service.accounts('PROD')[0]?.subject ?? '';
      const response = await callApi(
        `/environments/PROD/users/${sub}/suspend`,
        await serviceToken(),
        keyless,
      );
      expect(response.status).toBe(503);
      expect(((await response.json()) as { code: string }).code).toBe(
        'IDENTITY_SERVICE_NOT_CONFIGURED',
      );
    } finally {
      await keyless.close();
    }
  });
});
