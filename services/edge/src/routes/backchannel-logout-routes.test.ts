import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';

// The edge's part of Back-Channel Logout 1.0 (section 2.5, 2.8) over real HTTP, against the
// recording fake AuthFlowService: the form body, what reaches the service, and the answers
// (200 with no body, OAuth 2.0 error bodies, `Cache-Control: no-store`), whatever is posted.
// The token's checks are the auth-flow's (backchannel-logout.test.ts in the all-in-one).

let edge: TestEdge;

beforeAll(async () => {
  edge = await startTestEdge({ IDENTITY_ISSUER: 'https://id.example.test' });
});

afterAll(async () => {
  await edge.close();
});

beforeEach(() => {
  edge.authFlow.reset();
});

type Answer = { status: number; headers: Headers; text: string };

async function post(
  path: string,
  body: string | undefined,
  contentType: string | undefined = 'application/x-www-form-urlencoded',
): Promise<Answer> {
  const response = await fetch(`${edge.url}${path}`, {
    method: 'POST',
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const PROD = '/v1/auth/backchannel-logout/PROD';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

function expectOAuthError(answer: Answer, status: number): { error_description: string } {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(status >= 500 ? 'temporarily_unavailable' : 'invalid_request');
  return body as { error_description: string };
}

describe('POST /v1/auth/backchannel-logout/{environmentKey}', () => {
  it('hands the logout token to the auth-flow and answers 200 with no body, never stored', async () => {
    const answer = await post(PROD, form({ logout_token: 'a.b.c', extra: 'tolerated' }));
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(edge.authFlow.requestsOf('backchannelLogout')).toEqual([
      expect.objectContaining({ environmentKey: 'PROD', logoutToken: 'a.b.c' }),
    ]);
  });

  it("answers the auth-flow's refusal as OAuth's invalid_request with its reason", async () => {
    edge.authFlow.failNextWith(
      new GatewayError('LOGOUT_TOKEN_INVALID', 'The logout token was used before (jti).'),
    );
    const answer = await post(PROD, form({ logout_token: 'a.b.c' }));
    expect(expectOAuthError(answer, 400).error_description).toBe(
      'The logout token was used before (jti).',
    );
    edge.authFlow.failNextWith(
      new GatewayError('IDENTITY_ENVIRONMENT_NOT_FOUND', 'No active identity environment.'),
    );
    expectOAuthError(
      await post('/v1/auth/backchannel-logout/NOPE', form({ logout_token: 'x' })),
      400,
    );
  });

  it('answers an unreachable identity provider 503 with Retry-After, as temporarily_unavailable', async () => {
    edge.authFlow.failNextWith(new GatewayError('IDENTITY_UNAVAILABLE', 'Keys unreachable.'));
    const answer = await post(PROD, form({ logout_token: 'a.b.c' }));
    expectOAuthError(answer, 503);
    expect(answer.headers.get('retry-after')).toBe('5');
  });

  it.each([
    ['no body', undefined, undefined],
    ['an empty form', '', 'application/x-www-form-urlencoded'],
    ['no logout_token', form({ token: 'a.b.c' }), 'application/x-www-form-urlencoded'],
    ['an empty logout_token', form({ logout_token: '' }), 'application/x-www-form-urlencoded'],
    [
      'two logout_tokens',
      'logout_token=a.b.c&logout_token=d.e.f',
      'application/x-www-form-urlencoded',
    ],
    ['a logout_token over 8192 characters', form({ logout_token: 'x'.repeat(8193) }), undefined],
  ])('refuses %s with 400 invalid_request before any service call', async (_name, body, type) => {
    expectOAuthError(await post(PROD, body, type), 400);
    expect(edge.authFlow.requestsOf('backchannelLogout')).toEqual([]);
  });

  it('refuses a body that is not a form (415) or too large (413), as invalid_request', async () => {
    expectOAuthError(
      await post(PROD, JSON.stringify({ logout_token: 'a.b.c' }), 'application/json'),
      415,
    );
    expectOAuthError(await post(PROD, 'logout_token=a.b.c', 'text/plain'), 415);
    expectOAuthError(await post(PROD, `logout_token=${'x'.repeat(70 * 1024)}`), 413);
    expect(edge.authFlow.requestsOf('backchannelLogout')).toEqual([]);
  });

  it('refuses a malformed or undecodable environment key in the path with 400 invalid_request', async () => {
    for (const key of ['prod', 'P', '%ff', 'PROD%00', 'PROD%2F..']) {
      expectOAuthError(
        await post(`/v1/auth/backchannel-logout/${key}`, form({ logout_token: 'x' })),
        400,
      );
    }
    expect(edge.authFlow.requestsOf('backchannelLogout')).toEqual([]);
  });

  it('never answers 5xx to garbage', async () => {
    const garbage = [
      '%',
      '%%%%',
      'logout_token=%ff%fe',
      'logout_token=\u0000',
      '=&=&==',
      '&'.repeat(10_000),
      'logout_token',
      'a=1&'.repeat(5000),
      Buffer.from([0xff, 0xfe, 0xfd]).toString('latin1'),
      'logout_token=' + '\ud800'.repeat(10),
    ];
    for (const body of garbage) {
      const answer = await post(PROD, body);
      expect(answer.status).toBeLessThan(500);
      // What reaches the auth-flow is its to judge (this one accepts any token: 200); what
      // does not is refused here as the protocol's invalid_request.
      if (answer.status !== 200) expectOAuthError(answer, 400);
    }
  });

  it('describes the endpoint in /openapi.json with a form body and OAuth error bodies', async () => {
    const document = (await (await fetch(`${edge.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const operation = document.paths['/v1/auth/backchannel-logout/{environmentKey}']?.post as {
      operationId: string;
      security: unknown[];
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
    };
    expect(operation.operationId).toBe('handleBackchannelLogout');
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.requestBody.content)).toEqual([
      'application/x-www-form-urlencoded',
    ]);
    expect(operation.responses['400']?.content?.['application/json']?.schema.$ref).toBe(
      '#/components/schemas/OAuthErrorBody',
    );
  });
});
