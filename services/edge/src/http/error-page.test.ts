import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import { prefersHtml } from './error-page.js';

// Error pages a person can read: the browser endpoints (start, callback, resume, logged-out)
// and a path no route serves answer a navigation that prefers HTML with a page of the same
// status; everyone else keeps the JSON body of spec 7. Over real HTTP against the real edge
// (fake services behind it), with and without an `Origin`: both take the same way through
// the operation runner, and answer alike.

const ALLOWED_ORIGIN = 'https://app.example.test';
const ACCOUNT_URL = 'https://account.example.test/account';
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const SESSION_COOKIE = 'svc_auth_session=gst_token';
const TRANSACTION_ID = '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d';
/** A message with markup in it, as a service could answer one. */
const MARKUP_MESSAGE = 'No platform <script>alert(1)</script> & "more".';
const ESCAPED_MESSAGE =
  'No platform &#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;more&#34;.';

let edge: TestEdge;
let productionEdge: TestEdge;

beforeAll(async () => {
  const env = {
    IDENTITY_ISSUER: 'https://id.example.test',
    CORS_ORIGINS: ALLOWED_ORIGIN,
    ACCOUNT_CENTER_URL: ACCOUNT_URL,
  };
  edge = await startTestEdge(env);
  productionEdge = await startTestEdge({ ...env, NODE_ENV: 'production' });
});

afterAll(async () => {
  await edge.close();
  await productionEdge.close();
});

beforeEach(() => {
  edge.authFlow.reset();
  edge.registry.reset();
  productionEdge.authFlow.reset();
});

type Answer = { status: number; headers: Record<string, string | undefined>; text: string };

/** A GET with exactly these headers (fetch would add an Accept of its own). */
function get(
  path: string,
  headers: Record<string, string>,
  target: TestEdge = edge,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${target.url}${path}`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const answerHeaders: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: answerHeaders,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function expectPage(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.text).toMatch(/^<!DOCTYPE html>/);
  expect(answer.text).toContain(`<code>${code}</code>`);
  expect(answer.text).toContain(`(HTTP ${status})`);
  expect(answer.text).not.toContain('<script');
  expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.text)));
}

function expectJson(answer: Answer, status: number, body: unknown): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(JSON.parse(answer.text)).toEqual(body);
}

/** Requests without and with an Origin (credentialed CORS adds its headers, nothing else). */
const lanes = [
  ['without an Origin', {}],
  ['with an Origin', { origin: ALLOWED_ORIGIN }],
] as const;

type Case = {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** A failure of the auth-flow service behind the edge, when the edge does not fail first. */
  failure?: GatewayError;
  status: number;
  code: string;
  /** The JSON body API clients get, as today. */
  body: unknown;
};

const validationError = expect.objectContaining({ code: 'VALIDATION_ERROR' });

const cases: Case[] = [
  {
    name: 'start: a platform the service does not know',
    path: '/v1/auth/start?platformKey=SHOP&returnTo=%2Fcart',
    failure: new GatewayError('NOT_FOUND', MARKUP_MESSAGE),
    status: 404,
    code: 'NOT_FOUND',
    body: { code: 'NOT_FOUND', message: MARKUP_MESSAGE },
  },
  {
    name: 'start: no returnTo',
    path: '/v1/auth/start?platformKey=SHOP',
    status: 400,
    code: 'VALIDATION_ERROR',
    body: validationError,
  },
  {
    name: 'callback: an expired state',
    path: '/v1/auth/callback?code=c1&state=s1',
    failure: new GatewayError('NOT_FOUND', MARKUP_MESSAGE),
    status: 404,
    code: 'NOT_FOUND',
    body: { code: 'NOT_FOUND', message: MARKUP_MESSAGE },
  },
  {
    name: 'callback: the identity provider answered an error',
    path: '/v1/auth/callback?error=access_denied',
    status: 400,
    code: 'VALIDATION_ERROR',
    body: {
      code: 'VALIDATION_ERROR',
      message: 'The identity provider answered with an error instead of a code.',
      details: { identityError: 'access_denied' },
    },
  },
  {
    name: 'resume: no session cookie',
    path: `/v1/auth/resume?transaction=${TRANSACTION_ID}`,
    status: 401,
    code: 'UNAUTHORIZED',
    body: { code: 'UNAUTHORIZED', message: 'A gateway session cookie is required.' },
  },
  {
    name: 'resume: a handoff exists already',
    path: `/v1/auth/resume?transaction=${TRANSACTION_ID}`,
    headers: { cookie: SESSION_COOKIE },
    failure: new GatewayError('CONFLICT', MARKUP_MESSAGE),
    status: 409,
    code: 'CONFLICT',
    body: { code: 'CONFLICT', message: MARKUP_MESSAGE },
  },
  {
    name: 'logged-out: an unknown parameter',
    path: '/v1/auth/logged-out?state=x&extra=1',
    status: 400,
    code: 'VALIDATION_ERROR',
    body: validationError,
  },
  {
    name: 'logged-out: the service is unavailable',
    path: '/v1/auth/logged-out?state=x',
    failure: new GatewayError('SERVICE_UNAVAILABLE', MARKUP_MESSAGE),
    status: 503,
    code: 'SERVICE_UNAVAILABLE',
    body: { code: 'SERVICE_UNAVAILABLE', message: MARKUP_MESSAGE },
  },
];

/** Asks once with `accept` (absent when undefined), the service failing as the case says. */
async function ask(
  testCase: Case,
  lane: Record<string, string>,
  accept: string | undefined,
): Promise<Answer> {
  if (testCase.failure !== undefined) edge.authFlow.failNextWith(testCase.failure);
  const headers = { ...lane, ...testCase.headers, ...(accept === undefined ? {} : { accept }) };
  return get(testCase.path, headers);
}

describe.each(lanes)('browser endpoints through %s', (_lane, laneHeaders) => {
  it.each(cases)('$name: a page for a browser, the same status', async (testCase) => {
    const page = await ask(testCase, laneHeaders, BROWSER_ACCEPT);
    expectPage(page, testCase.status, testCase.code);
    if (testCase.failure !== undefined) expect(page.text).toContain(ESCAPED_MESSAGE);
    const json = await ask(testCase, laneHeaders, 'application/json');
    expect(json.status).toBe(page.status);
  });

  it.each(cases)('$name: JSON as before for API clients', async (testCase) => {
    for (const accept of ['application/json', undefined, '*/*', 'text/html, application/json']) {
      const answer = await ask(testCase, laneHeaders, accept);
      expectJson(answer, testCase.status, testCase.body);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.headers['content-security-policy']).toBeUndefined();
    }
  });
});

describe('the error page', () => {
  it('names the identity error and says what to do, with the account page', async () => {
    const answer = await get('/v1/auth/callback?error=access_denied', { accept: BROWSER_ACCEPT });
    expect(answer.text).toContain('<h1>Sign-in was not completed</h1>');
    expect(answer.text).toContain('The identity provider reported: <code>access_denied</code>');
    expect(answer.text).toContain('Return to the site you came from');
    expect(answer.text).toContain(`<a href="${ACCOUNT_URL}">Go to your account</a>`);
  });

  it('says in words what a bad start lacks, and offers no account page to a signed-out visitor', async () => {
    const answer = await get('/v1/auth/start', { accept: BROWSER_ACCEPT });
    expectPage(answer, 400, 'VALIDATION_ERROR');
    expect(answer.text).toContain('The parameter <code>platformKey</code> is missing.');
    expect(answer.text).toContain('The parameter <code>returnTo</code> is missing.');
    expect(answer.text).toContain('Return to the site you came from');
    expect(answer.text).not.toContain('<a ');
    expect(edge.registry.requestsOf('getPlatform')).toEqual([]);
  });

  it('names a malformed key and an unknown parameter of a start in words', async () => {
    const answer = await get('/v1/auth/start?platformKey=shop&returnTo=%2F&colour=red', {
      accept: BROWSER_ACCEPT,
    });
    expect(answer.text).toContain(
      'The parameter <code>platformKey</code> is not in the expected form.',
    );
    expect(answer.text).toContain(
      'The parameter <code>colour</code> is not one this address takes.',
    );
    expect(answer.text).not.toContain('<a ');
  });

  it('leads a refused start back to the home of the platform it names', async () => {
    const answer = await get('/v1/auth/start?platformKey=SHOP', { accept: BROWSER_ACCEPT });
    expectPage(answer, 400, 'VALIDATION_ERROR');
    expect(answer.text).toContain('The parameter <code>returnTo</code> is missing.');
    expect(answer.text).toContain(
      'Go back to <a href="https://shop.example.test">Shop</a> and sign in again from there.',
    );
    expect(answer.text).not.toContain(ACCOUNT_URL);
    expect(edge.registry.requestsOf('getPlatform')).toEqual([
      expect.objectContaining({ platformKey: 'SHOP' }),
    ]);
  });

  it('offers no link when the registry does not know the platform', async () => {
    edge.registry.failNextWith(new GatewayError('NOT_FOUND', 'Platform NOPE does not exist.'));
    const answer = await get('/v1/auth/start?platformKey=NOPE', { accept: BROWSER_ACCEPT });
    expectPage(answer, 400, 'VALIDATION_ERROR');
    expect(answer.text).toContain('Return to the site you came from');
    expect(answer.text).not.toContain('<a ');
  });

  it('carries the request id the answer names', async () => {
    const answer = await get('/v1/auth/callback?error=access_denied', {
      accept: BROWSER_ACCEPT,
      'x-request-id': 'req-123',
    });
    expect(answer.headers['x-request-id']).toBe('req-123');
    expect(answer.text).toContain('Request ID: <code>req-123</code>');
  });

  it('is allowed no script, frame, form or base and only its own style by hash', async () => {
    const answer = await get('/v1/auth/start?platformKey=SHOP', { accept: BROWSER_ACCEPT });
    const policy = answer.headers['content-security-policy'] ?? '';
    expect(policy.split('; ')).toEqual([
      "default-src 'none'",
      expect.stringMatching(/^style-src 'sha256-[A-Za-z0-9+/]+=*'$/),
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(answer.text).not.toMatch(/<script|\son[a-z]+=|javascript:/i);
    const style = /<style>([^<]*)<\/style>/.exec(answer.text)?.[1] ?? '';
    const hash = createHash('sha256').update(style).digest('base64');
    expect(policy).toContain(`style-src 'sha256-${hash}'`);
  });

  it.each(lanes)(
    'carries the security headers of a production answer through %s',
    async (_lane, laneHeaders) => {
      const answer = await get(
        '/v1/auth/callback?error=access_denied',
        { ...laneHeaders, accept: BROWSER_ACCEPT },
        productionEdge,
      );
      expectPage(answer, 400, 'VALIDATION_ERROR');
      expect(answer.headers['strict-transport-security']).toMatch(/^max-age=/);
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
    },
  );

  it('keeps Retry-After on a page of a refusal that has one', async () => {
    edge.authFlow.failNextWith(new GatewayError('IDENTITY_UNAVAILABLE', 'Down.'));
    const answer = await get('/v1/auth/callback?code=c&state=s', { accept: BROWSER_ACCEPT });
    expectPage(answer, 503, 'IDENTITY_UNAVAILABLE');
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.text).toContain('Wait a few seconds');
  });

  it('is not given to the endpoints platform backends call', async () => {
    const answer = await get('/v1/auth/exchange', { accept: BROWSER_ACCEPT });
    expectJson(answer, 405, expect.objectContaining({ code: 'METHOD_NOT_ALLOWED' }));
    const account = await get('/v1/account/me', { accept: BROWSER_ACCEPT });
    expectJson(account, 401, expect.objectContaining({ code: 'UNAUTHORIZED' }));
  });
});

describe('a path no route serves', () => {
  it('answers a browser navigation with a 404 page', async () => {
    for (const path of ['/', '/nowhere', '/v1/nowhere?x=<b>']) {
      const answer = await get(path, { accept: BROWSER_ACCEPT });
      expectPage(answer, 404, 'NOT_FOUND');
      expect(answer.text).toContain('<h1>Not found</h1>');
    }
  });

  it('answers everyone else with the JSON 404 as before', async () => {
    for (const accept of ['application/json', '*/*', undefined]) {
      const answer = await get('/nowhere', accept === undefined ? {} : { accept });
      expectJson(answer, 404, { code: 'NOT_FOUND', message: 'No such route.' });
    }
  });

  it('answers a form post there with JSON: only navigations get pages', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const outgoing = request(`${edge.url}/nowhere`, {
        method: 'POST',
        headers: { accept: BROWSER_ACCEPT },
      });
      outgoing.on('response', (response) => {
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(answer).toBe(404);
  });
});

describe('/favicon.ico', () => {
  it('answers 204 without a body, cacheable, so browsers log no 404', async () => {
    const answer = await get('/favicon.ico', { accept: 'image/avif,image/webp,*/*' });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(answer.headers['cache-control']).toBe('public, max-age=86400');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('prefersHtml (Accept negotiation, RFC 9110 section 12.5.1)', () => {
  it.each([
    [BROWSER_ACCEPT, true],
    ['text/html', true],
    ['TEXT/HTML;q=0.9, application/json;q=0.5', true],
    ['text/*, application/json;q=0.2', true],
    ['application/json, text/html;q=0.9', false],
    ['text/html, application/json', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
    ['application/json', false],
    ['text/html;q=0', false],
    ['text/plain, */*;q=0.1', false],
    ['text/html;q=2, application/json;q=0.1', false],
  ])('%j prefers HTML: %s', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });
});

describe('the error pages in /openapi.json', () => {
  type Responses = Record<string, { content?: Record<string, unknown> }>;
  let paths: Record<string, Record<string, { responses: Responses; description?: string }>>;

  beforeAll(async () => {
    const document = (await (await fetch(`${edge.url}/openapi.json`)).json()) as {
      paths: typeof paths;
    };
    paths = document.paths;
  });

  it.each(['/v1/auth/start', '/v1/auth/callback', '/v1/auth/resume', '/v1/auth/logged-out'])(
    'lists text/html beside JSON for the errors of %s',
    (path) => {
      const operation = paths[path]?.get;
      expect(operation?.description).toContain('prefers `text/html`');
      const errors = Object.entries(operation?.responses ?? {}).filter(
        ([status]) => status >= '400',
      );
      expect(errors.length).toBeGreaterThan(0);
      for (const [, response] of errors) {
        expect(Object.keys(response.content ?? {})).toEqual(['application/json', 'text/html']);
      }
    },
  );

  it('lists JSON only for the endpoints platform backends call', () => {
    const responses = paths['/v1/auth/exchange']?.post?.responses ?? {};
    expect(Object.keys(responses['401']?.content ?? {})).toEqual(['application/json']);
  });
});
