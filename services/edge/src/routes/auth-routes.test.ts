import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { GatewayError } from '@gateway/errors';
import { authorizationErrorRefusal } from '@gateway/oidc';
import {
  AUTHORIZE_URL,
  LOGGED_OUT_REDIRECT,
  LOGOUT_URL,
  PLATFORM_CALLBACK_REDIRECT,
  SESSION_ID,
  SESSION_TOKEN,
  USER_ID,
  type AuthFlowMethod,
} from '../testing/fake-auth-flow.js';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';

// The login flow of spec 4.1-4.7 over real HTTP: the real edge against a recording fake
// AuthFlowService and the fake registry (VerifyPlatformCredential). Both stand in for
// services being written in parallel (see testing/fake-auth-flow.ts); end-to-end tests
// against the real services are the lead's, with the all-in-one gateway. What is proven
// here is the edge's part: every status the edge decides itself (before any service call),
// credential and cookie handling, the Origin rule of cookie writes, headers of redirects,
// the JSON of exchange and introspect, and that the services' errors pass with their status.

const ALLOWED_ORIGIN = 'https://app.example.test';
const CALLBACK_URL = 'https://shop.example.test/auth/callback';
const BFF = { id: 'gwc_shop_bff', secret: 'gws_shop_bff_secret' };
const BACKEND = { id: 'gwc_shop_backend', secret: 'gws_shop_backend_secret' };
const INACTIVE = { id: 'gwc_old_bff', secret: 'gws_old_bff_secret' };
/** A client id and secret that need RFC 6749 2.3.1 form-encoding (`:`, `%`, space). */
const ENCODED = { id: 'client:with space', secret: 'sec%ret:x' };
const TRANSACTION_ID = '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d';
const CLEARED_COOKIE = 'svc_auth_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax';

let edge: TestEdge;
let productionEdge: TestEdge;

function registerCredentials(target: TestEdge): void {
  const credentials = target.registry.platformCredentials;
  credentials.set(BFF.id, {
    clientSecret: BFF.secret,
    kind: 'bff',
    platformKey: 'SHOP',
    platformActive: true,
    callbackUrl: CALLBACK_URL,
  });
  credentials.set(BACKEND.id, {
    clientSecret: BACKEND.secret,
    kind: 'backend',
    platformKey: 'SHOP',
    platformActive: true,
  });
  credentials.set(INACTIVE.id, {
    clientSecret: INACTIVE.secret,
    kind: 'bff',
    platformKey: 'OLD',
    platformActive: false,
    callbackUrl: 'https://old.example.test/cb',
  });
  credentials.set(ENCODED.id, {
    clientSecret: ENCODED.secret,
    kind: 'bff',
    platformKey: 'SHOP',
    platformActive: true,
    callbackUrl: CALLBACK_URL,
  });
}

beforeAll(async () => {
  const env = { IDENTITY_ISSUER: 'https://id.example.test', CORS_ORIGINS: ALLOWED_ORIGIN };
  edge = await startTestEdge(env);
  productionEdge = await startTestEdge({ ...env, NODE_ENV: 'production' });
  registerCredentials(edge);
  registerCredentials(productionEdge);
});

afterAll(async () => {
  await edge.close();
  await productionEdge.close();
});

beforeEach(async () => {
  for (const target of [edge, productionEdge]) {
    target.registry.reset();
    target.authFlow.reset();
    // Tests change the fake registry's credentials: drop the edge's verified ones.
    await target.changeFeed.announce();
  }
});

type Answer = {
  status: number;
  headers: Headers;
  cookies: string[];
  body: Record<string, unknown> | undefined;
};

async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  target: TestEdge = edge,
): Promise<Answer> {
  const response = await fetch(`${target.url}${path}`, { ...init, redirect: 'manual' });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    cookies: response.headers.getSetCookie(),
    body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`;
}

function postJson(
  path: string,
  body: unknown,
  headers: Record<string, string>,
  target: TestEdge = edge,
): Promise<Answer> {
  return send(
    path,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    },
    target,
  );
}

function authFlowCalls(target: TestEdge = edge): AuthFlowMethod[] {
  return target.authFlow.calls.map((call) => call.method);
}

function requestOf(method: AuthFlowMethod, target: TestEdge = edge): Record<string, unknown> {
  const [request] = target.authFlow.requestsOf(method);
  if (request === undefined) throw new Error(`${method} was not called`);
  return request;
}

function verifyCalls(): Record<string, unknown>[] {
  return edge.registry.requestsOf('verifyPlatformCredential');
}

function expectRedirect(answer: Answer, location: string): void {
  expect(answer.status).toBe(302);
  expect(answer.headers.get('location')).toBe(location);
  expect(answer.headers.get('cache-control')).toBe('no-store');
}

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.body?.code).toBe(code);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.headers.get('cache-control')).toBe('no-store');
}

const START = '/v1/auth/start?platformKey=SHOP&returnTo=%2Fcart';

describe('GET /v1/auth/start (startAuthentication)', () => {
  it('redirects (302, no-store) to the authorize URL the service answers', async () => {
    const answer = await send(START);
    expectRedirect(answer, AUTHORIZE_URL);
    expect(answer.body).toBeUndefined();
    expect(requestOf('startLogin')).toMatchObject({
      platformKey: 'SHOP',
      returnTo: '/cart',
      defaultScreen: 'in',
    });
    expect(requestOf('startLogin').onboardingMode).toBeUndefined();
  });

  it('passes onboardingMode and defaultScreen on', async () => {
    await send(
      '/v1/auth/start?platformKey=SHOP&returnTo=https%3A%2F%2Fshop.example.test%2Fx' +
        '&onboardingMode=central&defaultScreen=up',
    );
    expect(requestOf('startLogin')).toMatchObject({
      returnTo: 'https://shop.example.test/x',
      onboardingMode: 'central',
      defaultScreen: 'up',
    });
  });

  it.each([
    ['no platformKey', '/v1/auth/start?returnTo=%2F', 'platformKey'],
    ['a lower-case platformKey', '/v1/auth/start?platformKey=shop&returnTo=%2F', 'platformKey'],
    ['a one-letter platformKey', '/v1/auth/start?platformKey=S&returnTo=%2F', 'platformKey'],
    ['no returnTo', '/v1/auth/start?platformKey=SHOP', 'returnTo'],
    ['an empty returnTo', '/v1/auth/start?platformKey=SHOP&returnTo=', 'returnTo'],
    [
      'a returnTo over 2048 characters',
      `/v1/auth/start?platformKey=SHOP&returnTo=%2F${'a'.repeat(2048)}`,
      'returnTo',
    ],
    ['an unknown parameter', `${START}&callbackUrl=https%3A%2F%2Fevil.test`, 'callbackUrl'],
    ['an unknown onboardingMode', `${START}&onboardingMode=sometimes`, 'onboardingMode'],
    ['an unknown defaultScreen', `${START}&defaultScreen=signup`, 'defaultScreen'],
    ['a repeated platformKey', `${START}&platformKey=BLOG`, 'platformKey'],
  ])(
    'answers 400 VALIDATION_ERROR as JSON for %s, without a service call',
    async (_n, path, field) => {
      const answer = await send(path);
      expectError(answer, 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(answer.body?.details)).toContain(field);
      expect(authFlowCalls()).toEqual([]);
    },
  );

  it.each([
    ['NOT_FOUND', 404],
    ['INVALID_REDIRECT', 400],
    ['FORBIDDEN', 403],
    ['CENTRAL_ONBOARDING_DISABLED', 409],
    ['PLATFORM_CREDENTIALS_NOT_CONFIGURED', 409],
    ['IDENTITY_UNAVAILABLE', 503],
  ] as const)('passes the service error %s on with status %i', async (code, status) => {
    edge.authFlow.failNextWith(new GatewayError(code, 'From the service.'));
    const answer = await send(START);
    expectError(answer, status, code);
    expect(answer.body?.message).toBe('From the service.');
  });
});

const CALLBACK = '/v1/auth/callback?code=idp-code-1&state=state-1';

describe('GET /v1/auth/callback (handleIdentityCallback)', () => {
  it('sets the session cookie and redirects (302, no-store, no-referrer)', async () => {
    const answer = await send(CALLBACK);
    expectRedirect(answer, PLATFORM_CALLBACK_REDIRECT);
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(requestOf('completeLogin')).toMatchObject({ code: 'idp-code-1', state: 'state-1' });
    expect(answer.cookies).toHaveLength(1);
    const [cookie = ''] = answer.cookies;
    const [pair, ...attributes] = cookie.split('; ');
    expect(pair).toBe(`svc_auth_session=${encodeURIComponent(SESSION_TOKEN)}`);
    expect(attributes).toEqual([
      expect.stringMatching(/^Max-Age=\d+$/),
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
    ]);
  });

  it('sets Max-Age to the seconds until the session expires', async () => {
    edge.authFlow.answers.completeLogin.sessionExpiresAt = new Date(
      Date.now() + 7200_000,
    ).toISOString();
    const answer = await send(CALLBACK);
    const maxAge = Number(/Max-Age=(\d+)/.exec(answer.cookies[0] ?? '')?.[1]);
    expect(maxAge).toBeGreaterThanOrEqual(7195);
    expect(maxAge).toBeLessThanOrEqual(7200);
  });

  it('marks the cookie Secure in production only', async () => {
    const production = await send(CALLBACK, {}, productionEdge);
    expect(production.status).toBe(302);
    expect(production.cookies[0]?.split('; ')).toContain('Secure');
    const development = await send(CALLBACK);
    expect(development.cookies[0]?.split('; ')).not.toContain('Secure');
  });

  it('tolerates parameters the identity provider adds (iss, session_state, others)', async () => {
    const answer = await send(
      `${CALLBACK}&iss=https%3A%2F%2Fid.example.test&session_state=abc&provider_extra=1`,
    );
    expectRedirect(answer, PLATFORM_CALLBACK_REDIRECT);
    expect(requestOf('completeLogin')).toMatchObject({ code: 'idp-code-1', state: 'state-1' });
  });

  it('answers 400 VALIDATION_ERROR for an identity error without a state, without a service call or cookie', async () => {
    const answer = await send('/v1/auth/callback?error=access_denied');
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.cookies).toEqual([]);
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    [
      'with a description and iss',
      '/v1/auth/callback?error=access_denied&error_description=User%20cancelled' +
        '&state=state-1&iss=https%3A%2F%2Fid.example.test',
    ],
    ['next to a code', `${CALLBACK}&error=access_denied`],
  ])(
    'hands an identity error with a state (%s) to the auth-flow, without the code, and passes its 400 on without a cookie',
    async (_name, path) => {
      // The auth-flow ends the login the state names and answers the refusal.
      edge.authFlow.failNextWith(authorizationErrorRefusal('access_denied'));
      const answer = await send(path);
      expect(requestOf('completeLogin')).toMatchObject({
        code: '',
        state: 'state-1',
        identityError: 'access_denied',
      });
      expectError(answer, 400, 'VALIDATION_ERROR');
      expect(answer.body?.details).toEqual({ identityError: 'access_denied' });
      expect(answer.headers.get('location')).toBeNull();
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.cookies).toEqual([]);
    },
  );

  it('names the identity error in details, and only a well-formed one', async () => {
    const named = await send('/v1/auth/callback?error=access_denied');
    expect(named.body?.details).toEqual({ identityError: 'access_denied' });
    const odd = await send('/v1/auth/callback?error=%22%3Cscript%3E');
    expect(odd.body?.details).toBeUndefined();
  });

  it.each([
    ['no code', '/v1/auth/callback?state=state-1', 'code'],
    ['no state', '/v1/auth/callback?code=idp-code-1', 'state'],
    ['a repeated code', `${CALLBACK}&code=other`, 'code'],
  ])('answers 400 for %s, without a service call', async (_name, path, field) => {
    const answer = await send(path);
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(answer.body?.details)).toContain(field);
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['NOT_FOUND', 404],
    ['ID_TOKEN_INVALID', 401],
    ['ACCOUNT_INACTIVE', 403],
    ['AUTH_TRANSACTION_ALREADY_BOUND', 409],
  ] as const)('passes %s on with status %i and sets no cookie', async (code, status) => {
    edge.authFlow.failNextWith(new GatewayError(code, 'From the service.'));
    const answer = await send(CALLBACK);
    expectError(answer, status, code);
    expect(answer.cookies).toEqual([]);
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('does not follow a redirect URL that is not http(s) (500, no cookie)', async () => {
    edge.authFlow.answers.completeLogin.redirectUrl = 'javascript:alert(1)';
    const answer = await send(CALLBACK);
    expectError(answer, 500, 'INTERNAL_ERROR');
    expect(answer.cookies).toEqual([]);
  });
});

const RESUME = `/v1/auth/resume?transaction=${TRANSACTION_ID}`;

describe('GET /v1/auth/resume (resumeAuthentication)', () => {
  it('redirects with the URL-decoded session token of the cookie', async () => {
    const answer = await send(RESUME, {
      headers: { cookie: `svc_auth_session=${encodeURIComponent(SESSION_TOKEN)}` },
    });
    expectRedirect(answer, PLATFORM_CALLBACK_REDIRECT);
    expect(requestOf('resumeLogin')).toMatchObject({
      transactionId: TRANSACTION_ID,
      sessionToken: SESSION_TOKEN,
    });
  });

  it('finds the cookie among others, takes the first of duplicates, accepts quotes', async () => {
    await send(RESUME, {
      headers: { cookie: 'theme=dark; svc_auth_session="first%2Ftoken"; svc_auth_session=second' },
    });
    expect(requestOf('resumeLogin').sessionToken).toBe('first/token');
  });

  it.each([
    ['no cookie', undefined],
    ['another cookie only', 'theme=dark'],
    ['an empty session cookie', 'svc_auth_session='],
    ['a cookie that does not URL-decode', 'svc_auth_session=%E0%A4%A'],
    ['a cookie longer than a token can be', `svc_auth_session=${'x'.repeat(513)}`],
  ])('answers 401 UNAUTHORIZED for %s, without a service call', async (_name, cookie) => {
    const answer = await send(RESUME, cookie === undefined ? {} : { headers: { cookie } });
    expectError(answer, 401, 'UNAUTHORIZED');
    expect(authFlowCalls()).toEqual([]);
  });

  it('checks the cookie before the query (401 before 400)', async () => {
    const answer = await send('/v1/auth/resume?transaction=nope');
    expectError(answer, 401, 'UNAUTHORIZED');
  });

  it.each([
    ['a transaction that is not a UUID', '/v1/auth/resume?transaction=nope'],
    ['no transaction', '/v1/auth/resume'],
    ['an unknown parameter', `${RESUME}&platform=SHOP`],
  ])('answers 400 for %s', async (_name, path) => {
    const answer = await send(path, { headers: { cookie: 'svc_auth_session=t' } });
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['UNAUTHORIZED', 401],
    ['NOT_FOUND', 404],
    ['CONFLICT', 409],
  ] as const)('passes %s on with status %i', async (code, status) => {
    edge.authFlow.failNextWith(new GatewayError(code, 'From the service.'));
    const answer = await send(RESUME, { headers: { cookie: 'svc_auth_session=t' } });
    expectError(answer, status, code);
  });
});

const EXCHANGE = '/v1/auth/exchange';
const HANDOFF = { code: 'handoff_abc123' };

describe('POST /v1/auth/exchange (exchangeAuthenticationHandoff)', () => {
  it('answers 200 with the exact JSON of spec 4.4 (no-store)', async () => {
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization: basic(BFF.id, BFF.secret) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      session: { id: SESSION_ID, expiresAt: '2030-01-01T00:00:00.000Z', gatewayToken: 'gst_x' },
      user: {
        id: USER_ID,
        sub: 'user-sub-1',
        issuer: 'https://id.example.test',
        picture: 'https://id.example.test/p.png',
      },
      platform: { key: 'SHOP' },
      environment: { key: 'PROD', tier: 'production' },
      onboarding: {
        status: 'IN_PROGRESS',
        requirementVersion: 3,
        missingFields: ['company'],
        canCompleteCentrally: false,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
      permissions: ['platforms:admin'],
      returnTo: 'https://shop.example.test/cart',
    });
  });

  it("redeems for the key's platform and callback only", async () => {
    await postJson(EXCHANGE, HANDOFF, { authorization: basic(BFF.id, BFF.secret) });
    expect(verifyCalls()).toEqual([
      expect.objectContaining({ clientId: BFF.id, clientSecret: BFF.secret }),
    ]);
    expect(requestOf('exchangeHandoff')).toMatchObject({
      code: HANDOFF.code,
      platformKey: 'SHOP',
      callbackUrl: CALLBACK_URL,
    });
  });

  it('leaves user.picture out when it is not known', async () => {
    const user = edge.authFlow.answers.exchangeHandoff.user;
    edge.authFlow.answers.exchangeHandoff.user = { ...user, picture: undefined };
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization: basic(BFF.id, BFF.secret) });
    expect(answer.body?.user).toEqual({
      id: USER_ID,
      sub: 'user-sub-1',
      issuer: 'https://id.example.test',
    });
  });

  it('percent-decodes client id and secret (RFC 6749 section 2.3.1)', async () => {
    const authorization = basic(encodeURIComponent(ENCODED.id), encodeURIComponent(ENCODED.secret));
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization });
    expect(answer.status).toBe(200);
    expect(verifyCalls()).toEqual([
      expect.objectContaining({ clientId: ENCODED.id, clientSecret: ENCODED.secret }),
    ]);
  });

  it('accepts the scheme in any case and a secret containing a colon', async () => {
    edge.registry.platformCredentials.set('gwc_colon', {
      clientSecret: 'a:b',
      kind: 'bff',
      platformKey: 'SHOP',
      platformActive: true,
      callbackUrl: CALLBACK_URL,
    });
    const token = Buffer.from('gwc_colon:a:b').toString('base64');
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization: `bAsIc ${token}` });
    expect(answer.status).toBe(200);
  });

  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  it.each([
    ['no Authorization header', undefined],
    ['a Bearer token', 'Bearer abc.def.ghi'],
    ['Basic without credentials', 'Basic'],
    ['Basic with characters outside base64', 'Basic gwc_shop_bff:secret'],
    ['no colon', `Basic ${b64('gwc_shop_bff')}`],
    ['an empty client id', `Basic ${b64(':secret')}`],
    ['an empty secret', `Basic ${b64('gwc_shop_bff:')}`],
    ['a malformed percent-escape', `Basic ${b64('gwc_%zz:secret')}`],
    ['bytes that are not UTF-8', `Basic ${Buffer.from([0x67, 0x3a, 0xff]).toString('base64')}`],
    ['a control character', `Basic ${b64('gwc\u0001:secret')}`],
  ])('answers 401 with a Basic challenge for %s, without asking the registry', async (_n, auth) => {
    const answer = await postJson(
      EXCHANGE,
      HANDOFF,
      auth === undefined ? {} : { authorization: auth },
    );
    expectError(answer, 401, 'UNAUTHORIZED');
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="gateway"');
    expect(verifyCalls()).toEqual([]);
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['a wrong secret', basic(BFF.id, 'wrong')],
    ['an unknown client id', basic('gwc_unknown', 'x')],
    ['a key of an inactive platform', basic(INACTIVE.id, INACTIVE.secret)],
  ])('answers 401 with a Basic challenge for %s', async (_name, authorization) => {
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization });
    expectError(answer, 401, 'UNAUTHORIZED');
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="gateway"');
    expect(verifyCalls()).toHaveLength(1);
    expect(authFlowCalls()).toEqual([]);
  });

  it('answers 403 FORBIDDEN for a backend key, without a service call', async () => {
    const answer = await postJson(EXCHANGE, HANDOFF, {
      authorization: basic(BACKEND.id, BACKEND.secret),
    });
    expectError(answer, 403, 'FORBIDDEN');
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(authFlowCalls()).toEqual([]);
  });

  describe('checks credentials before the body', () => {
    it('401 for no credentials and a body that is not JSON', async () => {
      const answer = await send(EXCHANGE, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'code=handoff_x',
      });
      expectError(answer, 401, 'UNAUTHORIZED');
    });

    it('401 for wrong credentials and a malformed body', async () => {
      const answer = await postJson(EXCHANGE, '{"code":', { authorization: basic(BFF.id, 'no') });
      expectError(answer, 401, 'UNAUTHORIZED');
    });

    it('403 for a backend key and a malformed body', async () => {
      const answer = await postJson(
        EXCHANGE,
        { code: 'nope' },
        {
          authorization: basic(BACKEND.id, BACKEND.secret),
        },
      );
      expectError(answer, 403, 'FORBIDDEN');
    });
  });

  it('answers 415 for a body that is not JSON', async () => {
    const answer = await send(EXCHANGE, {
      method: 'POST',
      headers: { authorization: basic(BFF.id, BFF.secret), 'content-type': 'text/plain' },
      body: 'code=handoff_abc',
    });
    expectError(answer, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"code":'],
    ['no body', ''],
    ['an empty object', {}],
    ['a code without the handoff_ prefix', { code: 'abc123' }],
    ['a code over 200 characters', { code: `handoff_${'a'.repeat(193)}` }],
    ['a code that is not a string', { code: 123 }],
    ['an unknown property', { ...HANDOFF, platformKey: 'BLOG' }],
    ['an array', [HANDOFF]],
  ])('answers 400 VALIDATION_ERROR for %s', async (_name, body) => {
    const answer = await postJson(EXCHANGE, body, { authorization: basic(BFF.id, BFF.secret) });
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(authFlowCalls()).toEqual([]);
  });

  it('accepts a code of exactly 200 characters', async () => {
    const answer = await postJson(
      EXCHANGE,
      { code: `handoff_${'a'.repeat(192)}` },
      { authorization: basic(BFF.id, BFF.secret) },
    );
    expect(answer.status).toBe(200);
  });

  it.each([
    ['NOT_FOUND', 404],
    ['CONFLICT', 409],
    ['SERVICE_UNAVAILABLE', 503],
  ] as const)('passes %s on with status %i', async (code, status) => {
    edge.authFlow.failNextWith(new GatewayError(code, 'From the service.'));
    const answer = await postJson(EXCHANGE, HANDOFF, { authorization: basic(BFF.id, BFF.secret) });
    expectError(answer, status, code);
  });
});

const INTROSPECT = '/v1/auth/introspect';

describe('POST /v1/auth/introspect (introspectGatewaySession)', () => {
  const activeResult = {
    active: true,
    sessionId: SESSION_ID,
    expiresAt: '2030-01-01T00:00:00.000Z',
    platformKey: 'SHOP',
    user: {
      id: USER_ID,
      issuer: 'https://id.example.test',
      subject: 'user-sub-1',
      email: 'ada@example.test',
      emailVerified: true,
      status: 'active',
    },
    environment: { key: 'PROD', tier: 'production' },
  };

  it.each([
    ['the backend key', BACKEND],
    ['a BFF key', BFF],
  ])('answers the active session of spec 4.5 to %s', async (_name, key) => {
    const answer = await postJson(
      INTROSPECT,
      { token: 'gst_x' },
      {
        authorization: basic(key.id, key.secret),
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual(activeResult);
    expect(requestOf('introspectSession')).toMatchObject({ token: 'gst_x', platformKey: 'SHOP' });
  });

  it('answers exactly { active: false } for an inactive session', async () => {
    edge.authFlow.answers.introspectSession = {
      active: false,
      sessionId: SESSION_ID,
      platformKey: 'OTHER',
    };
    const answer = await postJson(
      INTROSPECT,
      { token: 'gst_x' },
      {
        authorization: basic(BACKEND.id, BACKEND.secret),
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ active: false });
    expect(answer.headers.get('cache-control')).toBe('no-store');
  });

  it('answers email null when the identity has none', async () => {
    const { user } = edge.authFlow.answers.introspectSession;
    edge.authFlow.answers.introspectSession.user = { ...user, email: '' };
    const answer = await postJson(
      INTROSPECT,
      { token: 'gst_x' },
      {
        authorization: basic(BACKEND.id, BACKEND.secret),
      },
    );
    expect((answer.body?.user as Record<string, unknown>).email).toBeNull();
  });

  const backend = () => ({ authorization: basic(BACKEND.id, BACKEND.secret) });
  it.each([
    ['no credentials', () => postJson(INTROSPECT, { token: 't' }, {}), 401],
    [
      'a key of an inactive platform',
      () =>
        postJson(
          INTROSPECT,
          { token: 't' },
          { authorization: basic(INACTIVE.id, INACTIVE.secret) },
        ),
      401,
    ],
    [
      'a wrong secret',
      () => postJson(INTROSPECT, { token: 't' }, { authorization: basic(BACKEND.id, 'x') }),
      401,
    ],
    ['no body', () => postJson(INTROSPECT, '', backend()), 400],
    ['an empty token', () => postJson(INTROSPECT, { token: '' }, backend()), 400],
    [
      'a token over 512 characters',
      () => postJson(INTROSPECT, { token: 'x'.repeat(513) }, backend()),
      400,
    ],
    [
      'an unknown property',
      () => postJson(INTROSPECT, { token: 't', platformKey: 'B' }, backend()),
      400,
    ],
    [
      'a body that is not JSON',
      () =>
        send(INTROSPECT, {
          method: 'POST',
          headers: { ...backend(), 'content-type': 'text/plain' },
          body: 'token=t',
        }),
      415,
    ],
  ] as const)(
    'answers %s with its status and no-store, without a service call',
    async (_n, run, status) => {
      const answer = await run();
      expect(answer.status).toBe(status);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(authFlowCalls()).toEqual([]);
    },
  );

  it('answers a service failure with no-store', async () => {
    edge.authFlow.failNextWith(new GatewayError('SERVICE_UNAVAILABLE', 'Store down.'));
    const answer = await postJson(INTROSPECT, { token: 't' }, backend());
    expectError(answer, 503, 'SERVICE_UNAVAILABLE');
  });
});

describe('verified platform credentials', () => {
  const introspectAs = (key: { id: string; secret: string }) =>
    postJson(INTROSPECT, { token: 'gst_x' }, { authorization: basic(key.id, key.secret) });

  it('asks the registry once for a key used again and again', async () => {
    for (let i = 0; i < 3; i += 1) expect((await introspectAs(BACKEND)).status).toBe(200);
    expect(verifyCalls()).toHaveLength(1);
    expect(authFlowCalls()).toEqual([
      'introspectSession',
      'introspectSession',
      'introspectSession',
    ]);
  });

  it('asks again once a registry change is announced: a revoked key is refused at once', async () => {
    expect((await introspectAs(BACKEND)).status).toBe(200);
    edge.registry.platformCredentials.delete(BACKEND.id);
    // Not announced (as by a registry changed behind the edge's back): still the kept answer.
    expect((await introspectAs(BACKEND)).status).toBe(200);
    await edge.changeFeed.announce();
    const refused = await introspectAs(BACKEND);
    expectError(refused, 401, 'UNAUTHORIZED');
    expect(verifyCalls()).toHaveLength(2);
    registerCredentials(edge);
  });

  it('checks further secrets of a known client id itself: wrong ones cost no registry call', async () => {
    for (let i = 0; i < 3; i += 1) {
      expectError(
        await introspectAs({ id: BACKEND.id, secret: `wrong-${i}` }),
        401,
        'UNAUTHORIZED',
      );
    }
    // The right secret of the same key is not affected.
    expect((await introspectAs(BACKEND)).status).toBe(200);
    expect(verifyCalls()).toHaveLength(1);
  });

  it('remembers an unknown client id until a registry change is announced', async () => {
    const unknown = { id: 'gwc_not_yet', secret: 'gws_not_yet' };
    for (let i = 0; i < 3; i += 1) expectError(await introspectAs(unknown), 401, 'UNAUTHORIZED');
    expect(verifyCalls()).toHaveLength(1);
    edge.registry.platformCredentials.set(unknown.id, {
      clientSecret: unknown.secret,
      kind: 'backend',
      platformKey: 'SHOP',
      platformActive: true,
    });
    await edge.changeFeed.announce();
    expect((await introspectAs(unknown)).status).toBe(200);
    expect(verifyCalls()).toHaveLength(2);
    edge.registry.platformCredentials.delete(unknown.id);
  });
});

describe('answers alike with and without an Origin', () => {
  // One way through the edge whatever the request carries; an Origin adds only credentialed
  // CORS. Both must give the same answer, headers included.
  const ORIGIN = { origin: ALLOWED_ORIGIN };
  const comparedHeaders = [
    'cache-control',
    'referrer-policy',
    'x-content-type-options',
    'content-type',
    'location',
    'www-authenticate',
    'retry-after',
  ];
  const shape = (answer: Answer) => ({
    status: answer.status,
    body: answer.body,
    cookies: answer.cookies.map((cookie) => cookie.replace(/Max-Age=\d+/, 'Max-Age=N')),
    headers: Object.fromEntries(comparedHeaders.map((name) => [name, answer.headers.get(name)])),
  });
  const both = async (run: (extra: Record<string, string>) => Promise<Answer>) => {
    const lean = await run({});
    const withOrigin = await run(ORIGIN);
    expect(withOrigin.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(lean.headers.get('access-control-allow-origin')).toBeNull();
    expect(lean.headers.get('x-request-id')).toBeTruthy();
    expect(withOrigin.headers.get('x-request-id')).toBeTruthy();
    expect(shape(lean)).toEqual(shape(withOrigin));
    return lean;
  };
  const get = (path: string) => (extra: Record<string, string>) =>
    send(path, { headers: extra }, productionEdge);
  const post =
    (path: string, body: unknown, headers: Record<string, string>) =>
    (extra: Record<string, string>) =>
      postJson(path, body, { ...headers, ...extra }, productionEdge);
  const bff = { authorization: basic(BFF.id, BFF.secret) };

  it.each([
    ['start', get(START)],
    ['start with an unknown parameter', get(`${START}&x=1`)],
    ['the callback (cookie, HSTS in production)', get(CALLBACK)],
    ['the callback with an identity error', get('/v1/auth/callback?error=access_denied')],
    ['exchange', post(EXCHANGE, HANDOFF, bff)],
    [
      'exchange with a backend key',
      post(EXCHANGE, HANDOFF, { authorization: basic(BACKEND.id, BACKEND.secret) }),
    ],
    ['exchange without credentials', post(EXCHANGE, HANDOFF, {})],
    ['exchange with a malformed body', post(EXCHANGE, { code: 'nope' }, bff)],
    ['introspect', post(INTROSPECT, { token: 'gst_x' }, bff)],
    ['introspect with a body that is not JSON', post(INTROSPECT, '{', bff)],
  ])('%s', async (_name, run) => {
    await both(run);
  });

  it('a service failure', async () => {
    const run = post(INTROSPECT, { token: 'gst_x' }, bff);
    await both(async (extra) => {
      productionEdge.authFlow.failNextWith(new GatewayError('SERVICE_UNAVAILABLE', 'Store down.'));
      return run(extra);
    });
  });

  it('sends HSTS in production', async () => {
    const answer = await send(START, {}, productionEdge);
    expect(answer.headers.get('strict-transport-security')).toMatch(/max-age=/);
  });
});

const LOGOUT = '/v1/auth/logout';
const SESSION_COOKIE = { cookie: `svc_auth_session=${encodeURIComponent(SESSION_TOKEN)}` };

function logout(
  init: { origin?: string; cookie?: boolean; body?: string; contentType?: string; query?: string },
  target: TestEdge = edge,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.origin !== undefined) headers.origin = init.origin;
  if (init.cookie !== false) Object.assign(headers, SESSION_COOKIE);
  if (init.body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  return send(
    `${LOGOUT}${init.query ?? ''}`,
    { method: 'POST', headers, ...(init.body === undefined ? {} : { body: init.body }) },
    target,
  );
}

describe('POST /v1/auth/logout (logout)', () => {
  it('revokes, clears the cookie and answers the logout URL (200, no-store)', async () => {
    const answer = await logout({ origin: ALLOWED_ORIGIN });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ logoutUrl: LOGOUT_URL });
    expect(answer.cookies).toEqual([CLEARED_COOKIE]);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const request = requestOf('logout');
    expect(request.sessionToken).toBe(SESSION_TOKEN);
    expect(request.returnTo).toBeUndefined();
  });

  it('answers logoutUrl null without a cookie, and still clears it', async () => {
    const answer = await logout({ origin: ALLOWED_ORIGIN, cookie: false });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ logoutUrl: null });
    expect(answer.cookies).toEqual([CLEARED_COOKIE]);
    expect(requestOf('logout').sessionToken).toBeUndefined();
  });

  it('clears a Secure cookie in production', async () => {
    const answer = await logout({ origin: ALLOWED_ORIGIN }, productionEdge);
    expect(answer.status).toBe(200);
    expect(answer.cookies).toEqual([`${CLEARED_COOKIE}; Secure`]);
  });

  it.each([
    ['no Origin', undefined],
    ['a foreign Origin', 'https://evil.example.test'],
    ['Origin null', 'null'],
    ['an allowed origin with a path', `${ALLOWED_ORIGIN}/`],
  ])(
    'answers 403 FORBIDDEN for %s, without revoking or touching the cookie',
    async (_name, origin) => {
      const answer = await logout(origin === undefined ? {} : { origin });
      expectError(answer, 403, 'FORBIDDEN');
      expect(answer.cookies).toEqual([]);
      expect(authFlowCalls()).toEqual([]);
    },
  );

  it('checks the Origin before the body (403 before 415)', async () => {
    const answer = await logout({ body: 'x', contentType: 'text/plain' });
    expectError(answer, 403, 'FORBIDDEN');
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['an absent body', undefined],
    ['an empty body', ''],
    ['{}', '{}'],
  ])('accepts %s', async (_name, body) => {
    const answer = await logout({
      origin: ALLOWED_ORIGIN,
      ...(body === undefined ? {} : { body }),
    });
    expect(answer.status).toBe(200);
    expect(requestOf('logout').returnTo).toBeUndefined();
  });

  it('takes returnTo from the body', async () => {
    await logout({ origin: ALLOWED_ORIGIN, body: JSON.stringify({ returnTo: '/bye' }) });
    expect(requestOf('logout').returnTo).toBe('/bye');
  });

  it('takes returnTo from the query', async () => {
    await logout({ origin: ALLOWED_ORIGIN, query: '?returnTo=%2Fquery' });
    expect(requestOf('logout').returnTo).toBe('/query');
  });

  it('prefers the body when both carry returnTo', async () => {
    await logout({
      origin: ALLOWED_ORIGIN,
      query: '?returnTo=%2Fquery',
      body: JSON.stringify({ returnTo: '/body' }),
    });
    expect(requestOf('logout').returnTo).toBe('/body');
  });

  it('uses the query when the body is {}', async () => {
    await logout({ origin: ALLOWED_ORIGIN, query: '?returnTo=%2Fquery', body: '{}' });
    expect(requestOf('logout').returnTo).toBe('/query');
  });

  it.each([
    ['an unknown body property', { body: JSON.stringify({ returnTo: '/x', next: '/y' }) }, 400],
    ['a returnTo that is not a string', { body: JSON.stringify({ returnTo: 5 }) }, 400],
    ['an empty returnTo', { body: JSON.stringify({ returnTo: '' }) }, 400],
    ['malformed JSON', { body: '{"returnTo":' }, 400],
    ['a JSON array', { body: '[]' }, 400],
    ['an unknown query parameter', { query: '?next=%2Fx' }, 400],
    ['a body that is not JSON', { body: 'returnTo=/x', contentType: 'text/plain' }, 415],
  ] as const)(
    'answers %s with its status, clears the cookie and still revokes the session',
    async (_name, init, status) => {
      const answer = await logout({ origin: ALLOWED_ORIGIN, ...init });
      expectError(answer, status, status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'VALIDATION_ERROR');
      expect(answer.cookies).toEqual([CLEARED_COOKIE]);
      // Revoked without a destination: spec 4.6 "revoked in every case".
      expect(edge.authFlow.requestsOf('logout')).toEqual([
        expect.objectContaining({ sessionToken: SESSION_TOKEN }),
      ]);
      expect(requestOf('logout').returnTo).toBeUndefined();
    },
  );

  it('answers a malformed request without a cookie with no service call', async () => {
    const answer = await logout({ origin: ALLOWED_ORIGIN, cookie: false, body: '[]' });
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(answer.cookies).toEqual([CLEARED_COOKIE]);
    expect(authFlowCalls()).toEqual([]);
  });

  it.each([
    ['INVALID_REDIRECT', 400],
    ['FORBIDDEN', 403],
    ['SERVICE_UNAVAILABLE', 503],
  ] as const)(
    'clears the cookie when the service answers %s (%i), asking it once',
    async (code, status) => {
      edge.authFlow.failNextWith(new GatewayError(code, 'From the service.'));
      const answer = await logout({
        origin: ALLOWED_ORIGIN,
        body: JSON.stringify({ returnTo: 'https://evil.example.test/' }),
      });
      expectError(answer, status, code);
      expect(answer.cookies).toEqual([CLEARED_COOKIE]);
      expect(authFlowCalls()).toEqual(['logout']);
    },
  );
});

describe('GET /v1/auth/logged-out (completeLogout)', () => {
  it('redirects (302, no-store) where the service says, passing state on', async () => {
    const answer = await send('/v1/auth/logged-out?state=encrypted-state');
    expectRedirect(answer, LOGGED_OUT_REDIRECT);
    expect(requestOf('completeLogout')).toMatchObject({ state: 'encrypted-state' });
  });

  it('leaves the fallback for a missing state to the service (empty state)', async () => {
    const answer = await send('/v1/auth/logged-out');
    expectRedirect(answer, LOGGED_OUT_REDIRECT);
    expect(requestOf('completeLogout')).toMatchObject({ state: '' });
  });

  it('answers 400 for an unknown parameter', async () => {
    const answer = await send('/v1/auth/logged-out?state=s&next=x');
    expectError(answer, 400, 'VALIDATION_ERROR');
    expect(authFlowCalls()).toEqual([]);
  });
});

describe('the login flow in /openapi.json', () => {
  const described: { operationId: string; method: string; path: string; security: unknown }[] = [
    { operationId: 'startAuthentication', method: 'get', path: '/v1/auth/start', security: [] },
    {
      operationId: 'handleIdentityCallback',
      method: 'get',
      path: '/v1/auth/callback',
      security: [],
    },
    {
      operationId: 'resumeAuthentication',
      method: 'get',
      path: '/v1/auth/resume',
      security: [{ gatewayCookieAuth: [] }],
    },
    {
      operationId: 'exchangeAuthenticationHandoff',
      method: 'post',
      path: '/v1/auth/exchange',
      security: [{ platformBasicAuth: [] }],
    },
    {
      operationId: 'introspectGatewaySession',
      method: 'post',
      path: '/v1/auth/introspect',
      security: [{ platformBasicAuth: [] }],
    },
    {
      operationId: 'logout',
      method: 'post',
      path: '/v1/auth/logout',
      security: [{ gatewayCookieAuth: [] }],
    },
    { operationId: 'completeLogout', method: 'get', path: '/v1/auth/logged-out', security: [] },
  ];

  type Operation = {
    operationId: string;
    security: unknown;
    requestBody?: { required?: boolean };
    responses: Record<string, { headers?: Record<string, unknown> }>;
  };
  let document: {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };

  beforeAll(async () => {
    const response = await fetch(`${edge.url}/openapi.json`);
    document = (await response.json()) as typeof document;
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
  });

  it.each(described)('describes $operationId with its security', (operation) => {
    const entry = document.paths[operation.path]?.[operation.method];
    expect(entry?.operationId).toBe(operation.operationId);
    expect(entry?.security).toEqual(operation.security);
    if (operation.method === 'get') {
      expect(Object.keys(entry?.responses['302']?.headers ?? {})).toContain('Location');
    }
  });

  it('names the response schemas and makes the logout body optional', () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['ExchangeResult', 'IntrospectionResult', 'LogoutResult']),
    );
    expect(document.paths['/v1/auth/logout']?.post?.requestBody?.required).toBe(false);
    expect(document.paths['/v1/auth/exchange']?.post?.requestBody?.required).toBe(true);
  });

  it('answers 405 with Allow for another method on a login-flow path', async () => {
    const answer = await send('/v1/auth/exchange');
    expectError(answer, 405, 'METHOD_NOT_ALLOWED');
    expect(answer.headers.get('allow')).toBe('POST');
  });
});
