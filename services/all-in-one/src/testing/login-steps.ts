import type { TestBrowser, TestOpenIdProvider } from '@gateway/testkit';
import type { ApiResponse, GatewayUnderTest } from './gateway-under-test.js';

// What a browser and a platform backend do against the gateway, step by step.

export type IssuedKey = {
  id: string;
  kind: string;
  clientId: string;
  clientSecret: string;
  redirectPairId: string | null;
};

export const basicAuthorization = (key: IssuedKey) =>
  `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`;

export type BrowserAnswer = {
  status: number;
  headers: Headers;
  location: string | null;
  text: string;
};

export type LoginSteps = {
  browserGet(path: string, cookie?: string): Promise<BrowserAnswer>;
  signIn(
    provider: TestOpenIdProvider,
    platformKey: string,
    returnTo: string,
    /** Default 'user-1'. */
    accountId?: string,
  ): Promise<{
    authorize: URL;
    landed: BrowserAnswer;
    browser: TestBrowser;
    callbackQuery: string;
  }>;
  exchange(key: IssuedKey, code: string): Promise<ApiResponse>;
  introspect(key: IssuedKey, token: string): Promise<ApiResponse>;
};

export function loginSteps(t: GatewayUnderTest): LoginSteps {
  async function browserGet(path: string, cookie?: string) {
    const response = await fetch(`${t.gateway.url}${path}`, {
      redirect: 'manual',
      headers: cookie === undefined ? {} : { cookie },
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      location: response.headers.get('location'),
      text,
    };
  }

  /** Start → identity provider login → gateway callback: answers the callback's response. */
  async function signIn(
    provider: TestOpenIdProvider,
    platformKey: string,
    returnTo: string,
    accountId = 'user-1',
  ) {
    const start = await browserGet(
      `/v1/auth/start?platformKey=${platformKey}&returnTo=${encodeURIComponent(returnTo)}`,
    );
    if (start.status !== 302) throw new Error(`start answered ${start.status}: ${start.text}`);
    const authorize = new URL(start.location ?? '');
    const browser = provider.browser();
    const callback = await browser.signIn(authorize.href, accountId);
    if (`${callback.origin}${callback.pathname}` !== 'http://localhost:8080/v1/auth/callback') {
      throw new Error(`the provider sent the browser to ${callback.href}`);
    }
    const landed = await browserGet(`/v1/auth/callback${callback.search}`);
    return { authorize, landed, browser, callbackQuery: callback.search };
  }

  async function exchange(key: IssuedKey, code: string) {
    return t.call('POST', '/v1/auth/exchange', {
      token: null,
      headers: { authorization: basicAuthorization(key) },
      body: { code },
    });
  }

  async function introspect(key: IssuedKey, token: string) {
    return t.call('POST', '/v1/auth/introspect', {
      token: null,
      headers: { authorization: basicAuthorization(key) },
      body: { token },
    });
  }

  return { browserGet, signIn, exchange, introspect };
}

export function sessionCookieOf(headers: Headers): { token: string; attributes: string } {
  const cookie = headers.getSetCookie().find((value) => value.startsWith('svc_auth_session='));
  if (cookie === undefined) throw new Error('no session cookie');
  const [pair = '', ...attributes] = cookie.split(';');
  return {
    token: decodeURIComponent(pair.slice('svc_auth_session='.length)),
    attributes: attributes.join(';'),
  };
}

export function handoffCodeOf(location: string | null): string {
  return new URL(location ?? '').searchParams.get('code') ?? '';
}
