import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { GatewayError } from '@gateway/errors';
import { createLogger } from '@gateway/telemetry';
import type { Authentication } from '../auth/authentication.js';
import type { UserAuthentication } from '../auth/user-authentication.js';
import type { EdgeClients } from '../service-clients.js';
import type { PlatformCredentialVerifier } from './basic-credentials.js';
import { createCors } from './cors.js';
import { createEdgeServer } from './edge-server.js';
import { createLoadShedder } from './load-shedding.js';
import { defineOperation } from './operation.js';
import { createOperationRunner } from './operation-runner.js';
import { createRateLimiter } from './rate-limit.js';
import { createMemoryRateLimitStore } from './rate-limit-store.js';
import { RouteTable } from './route-table.js';

// The operation runner over real HTTP, with operations of the shapes the spec has: query
// parameters, path parameters and a JSON body. Nothing here authenticates: the operations
// are public, and the authenticators are never asked.
const logged: string[] = [];
let server: Server;
let base: string;

const operations = [
  defineOperation({
    auth: { kind: 'public' },
    response: { kind: 'json', status: 200 },
    operationId: 'echoQuery',
    method: 'get',
    path: '/v1/things',
    summary: 'test',
    tags: ['Test'],
    query: z.object({ platformKey: z.string().regex(/^[A-Z][A-Z0-9_]{1,63}$/) }).strict(),
    responses: { 200: { description: 'ok' } },
    handler: async ({ query }) => ({ got: query.platformKey }),
  }),
  defineOperation({
    auth: { kind: 'public' },
    response: { kind: 'json', status: 200 },
    operationId: 'echoBody',
    method: 'post',
    path: '/v1/things/:thingKey',
    summary: 'test',
    tags: ['Test'],
    params: z.object({ thingKey: z.string().min(2) }),
    body: z
      .object({ code: z.string().startsWith('handoff_').max(200) })
      .strict()
      .optional(),
    bodyLimitBytes: 256,
    responses: { 200: { description: 'ok' } },
    handler: async ({ params, body }) => ({ thing: params.thingKey, body }),
  }),
  defineOperation({
    auth: { kind: 'public' },
    response: { kind: 'json', status: 200 },
    operationId: 'fail',
    method: 'get',
    path: '/v1/fail/:how',
    summary: 'test',
    tags: ['Test'],
    params: z.object({ how: z.enum(['spec', 'bug']) }),
    responses: { 200: { description: 'ok' } },
    handler: async ({ params }) => {
      if (params.how === 'spec') {
        throw new GatewayError('CENTRAL_ONBOARDING_DISABLED', 'Central onboarding is disabled.');
      }
      throw new Error('disk quota exceeded at line 42');
    },
  }),
];

beforeAll(async () => {
  const routes = new RouteTable();
  for (const operation of operations) routes.add(operation);
  const logger = createLogger({
    service: 'test',
    destination: { write: (line: string) => void logged.push(line) },
  });
  const unused = <T>() => ({}) as unknown as T;
  const clients = unused<EdgeClients>();
  const shedder = createLoadShedder({ maxInFlight: 0, logger });
  const runOperation = createOperationRunner({
    services: { clients, baseUrl: 'http://localhost', probeTimeoutMs: 1000 },
    logger,
    limiter: createRateLimiter({
      settings: {
        windowSeconds: 60,
        browserPerIp: 0,
        exchangePerClient: 0,
        introspectPerClient: 0,
        serverPerIp: 0,
      },
      store: createMemoryRateLimitStore(),
      logger,
    }),
    shedder,
    credentials: unused<PlatformCredentialVerifier>(),
    authentication: unused<Authentication>(),
    userAuthentication: unused<UserAuthentication>(),
    isAllowedOrigin: async () => false,
    cookie: { secure: false },
    clientAddress: () => '127.0.0.1',
    errorPage: {},
    bodyDeadlineMs: 5_000,
  });
  const cors = createCors({
    corsOrigins: [],
    identityIssuer: 'https://id.example.test',
    registry: unused<EdgeClients['registry']>(),
    logger,
  });
  server = createServer(
    createEdgeServer({
      routes,
      runOperation,
      shedder,
      clientAddress: () => '127.0.0.1',
      pages: [],
      cors,
      logger,
      production: false,
      errorPage: {},
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function call(path: string, init?: RequestInit) {
  const response = await fetch(`${base}${path}`, init);
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('declared operations through the runner', () => {
  it('hands the handler the parsed query, and answers no-store', async () => {
    const { status, body, headers } = await call('/v1/things?platformKey=SHOP');
    expect(status).toBe(200);
    expect(body).toEqual({ got: 'SHOP' });
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('x-request-id')).toBeTruthy();
  });

  it('rejects a malformed or unknown query parameter with VALIDATION_ERROR naming it', async () => {
    const bad = await call('/v1/things?platformKey=shop');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(bad.body.details).toEqual({
      issues: [expect.objectContaining({ location: 'query', path: 'platformKey' })],
    });
    const unknown = await call('/v1/things?platformKey=SHOP&callbackUrl=https://evil.example');
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.details)).toContain('callbackUrl');
  });

  it('accepts a JSON body, an empty body and a body-less request', async () => {
    const json = { 'content-type': 'application/json' };
    const withBody = await call('/v1/things/ab', {
      method: 'POST',
      headers: json,
      body: '{"code":"handoff_x"}',
    });
    expect(withBody).toMatchObject({
      status: 200,
      body: { thing: 'ab', body: { code: 'handoff_x' } },
    });
    const empty = await call('/v1/things/ab', { method: 'POST', headers: json, body: '' });
    expect(empty).toMatchObject({ status: 200, body: { thing: 'ab' } });
    const none = await call('/v1/things/ab', { method: 'POST' });
    expect(none).toMatchObject({ status: 200, body: { thing: 'ab' } });
  });

  it('answers 415 for a body that is not JSON (spec 7)', async () => {
    const { status, body } = await call('/v1/things/ab', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'code=handoff_x',
    });
    expect(status).toBe(415);
    expect(body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 for malformed JSON and for unknown properties', async () => {
    const headers = { 'content-type': 'application/json' };
    const malformed = await call('/v1/things/ab', { method: 'POST', headers, body: '{"code":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
    const unknown = await call('/v1/things/ab', {
      method: 'POST',
      headers,
      body: '{"code":"handoff_x","allowedReturnUrls":[]}',
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.details)).toContain('allowedReturnUrls');
  });

  it('answers 413 for a body over the operation limit', async () => {
    const { status, body } = await call('/v1/things/ab', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: `handoff_${'x'.repeat(400)}` }),
    });
    expect(status).toBe(413);
    expect(body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers an unknown route with 404 and a known path with another method with 405', async () => {
    const missing = await call('/v1/nothing-here');
    expect(missing).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const wrongMethod = await call('/v1/things', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect(wrongMethod.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers a spec error with its status and body, and never shows an unexpected failure', async () => {
    const spec = await call('/v1/fail/spec');
    expect(spec).toMatchObject({
      status: 409,
      body: { code: 'CENTRAL_ONBOARDING_DISABLED', message: 'Central onboarding is disabled.' },
    });
    logged.length = 0;
    const bug = await call('/v1/fail/bug');
    expect(bug.status).toBe(500);
    expect(bug.body).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal error.' });
    expect(bug.headers.get('cache-control')).toBe('no-store');
    // The cause is logged for operators, not sent to the caller.
    expect(logged.join('')).toContain('disk quota exceeded');
  });
});
