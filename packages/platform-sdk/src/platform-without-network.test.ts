import { describe, expect, it } from '@jest/globals';
import { GatewayPlatformError } from './errors.js';
import { createGatewayPlatform, type GatewayPlatform } from './gateway-platform.js';
import { loginNonceOf } from './login-binding.js';

// What the SDK decides before calling the gateway: the start URL and pending cookie, and the
// callback refusals of spec 4.4. The fetch fails the test if it is ever called.

let calls = 0;
function platform(gatewayUrl = 'http://localhost:8080'): GatewayPlatform {
  return createGatewayPlatform({
    gatewayUrl,
    platformKey: 'SHOP',
    bffKey: { clientId: 'bff-id', clientSecret: 'bff-secret' },
    expectedEnvironment: 'PROD',
    fetch: () => {
      calls += 1;
      return Promise.reject(new Error('no network in unit tests'));
    },
  });
}

async function refusal(promise: Promise<unknown>): Promise<GatewayPlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayPlatformError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('startLogin (spec 4.1, 4.4)', () => {
  it('builds the start URL and a fresh random pending cookie whose hash rides in returnTo', () => {
    const first = platform().startLogin({ returnTo: 'http://localhost:3000/orders?page=2' });
    const url = new URL(first.url);
    expect(`${url.origin}${url.pathname}`).toBe('http://localhost:8080/v1/auth/start');
    const secret =
      /^gw_login_pending=([A-Za-z0-9_-]{43}); Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/.exec(
        first.setCookie,
      )?.[1];
    expect(secret).toBeDefined();
    expect(Object.fromEntries(url.searchParams)).toEqual({
      platformKey: 'SHOP',
      returnTo: `http://localhost:3000/orders?page=2&gw_login_nonce=${loginNonceOf(secret ?? '')}`,
    });
    // The start URL (kept in browser history) never shows the secret itself.
    expect(first.url).not.toContain(secret);
    expect(platform().startLogin().setCookie).not.toBe(first.setCookie);
  });

  it('defaults returnTo to / and passes defaultScreen and onboardingMode on', () => {
    const { url, setCookie } = platform('https://auth.example').startLogin({
      defaultScreen: 'up',
      onboardingMode: 'platform',
    });
    expect(Object.fromEntries(new URL(url).searchParams)).toEqual({
      platformKey: 'SHOP',
      returnTo: expect.stringMatching(/^\/\?gw_login_nonce=[A-Za-z0-9_-]{43}$/),
      defaultScreen: 'up',
      onboardingMode: 'platform',
    });
    expect(setCookie).toMatch(/; Secure$/);
  });

  it('refuses an empty or over-long returnTo', () => {
    expect(() => platform().startLogin({ returnTo: '' })).toThrow(GatewayPlatformError);
    // The login's nonce rides in returnTo too: 59 of the gateway's 2048 characters.
    expect(() => platform().startLogin({ returnTo: `/${'x'.repeat(1989)}` })).toThrow(
      'returnTo must have 1 to 1989 characters',
    );
    expect(() => platform().startLogin({ returnTo: `/${'x'.repeat(1988)}` })).not.toThrow();
  });
});

describe('handleCallback refusals before the exchange (spec 4.4)', () => {
  it('refuses a callback without the pending cookie: LOGIN_NOT_PENDING', async () => {
    calls = 0;
    for (const cookieHeader of [undefined, 'other=1', 'gw_login_pending=']) {
      const error = await refusal(platform().handleCallback({ code: 'handoff_abc', cookieHeader }));
      expect(error.code).toBe('LOGIN_NOT_PENDING');
    }
    expect(calls).toBe(0);
  });

  it('refuses a missing, foreign or over-long code: INVALID_CODE', async () => {
    calls = 0;
    for (const code of [undefined, '', 'handoff_', 'abc', `handoff_${'x'.repeat(193)}`]) {
      const error = await refusal(
        platform().handleCallback({ code, cookieHeader: 'gw_login_pending=p' }),
      );
      expect(error.code).toBe('INVALID_CODE');
    }
    expect(calls).toBe(0);
  });

  it('offers the Set-Cookie value that deletes the pending cookie', () => {
    expect(platform().clearPendingCookie()).toBe(
      'gw_login_pending=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    );
  });
});

describe('introspect without a usable token', () => {
  it('answers inactive for an empty or over-long token without calling the gateway', async () => {
    calls = 0;
    expect(await platform().introspect('')).toEqual({ state: 'inactive' });
    expect(await platform().introspect('x'.repeat(513))).toEqual({ state: 'inactive' });
    expect(calls).toBe(0);
  });
});
