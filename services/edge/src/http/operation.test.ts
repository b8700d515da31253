import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { z } from 'zod';
import { GatewayError } from '@gateway/errors';
import { createLogger } from '@gateway/telemetry';
import { createErrorHandler, createUnmatchedRouteHandler } from './error-handler.js';
import { defineOperation } from './operation.js';
import { OperationCatalog } from './operation-catalog.js';

// A real Express app built from the same pieces as the edge, with operations of the shapes
// the spec has: query parameters, path parameters and a JSON body.
const logged: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const catalog = new OperationCatalog();
  const router = express.Router();
  defineOperation(router, catalog, {
    operationId: 'echoQuery',
    method: 'get',
    path: '/v1/things',
    summary: 'test',
    tags: ['Test'],
    query: z.object({ platformKey: z.string().regex(/^[A-Z][A-Z0-9_]{1,63}$/) }).strict(),
    responses: { 200: { description: 'ok' } },
    handler: ({ query }, _req, res) => void res.json({ got: query.platformKey }),
  });
  defineOperation(router, catalog, {
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
    handler: ({ params, body }, _req, res) => void res.json({ thing: params.thingKey, body }),
  });
  defineOperation(router, catalog, {
    operationId: 'fail',
    method: 'get',
    path: '/v1/fail/:how',
    summary: 'test',
    tags: ['Test'],
    params: z.object({ how: z.enum(['spec', 'bug']) }),
    responses: { 200: { description: 'ok' } },
    handler: ({ params }) => {
      if (params.how === 'spec') {
        throw new GatewayError('CENTRAL_ONBOARDING_DISABLED', 'Central onboarding is disabled.');
      }
      throw new Error('disk quota exceeded at line 42');
    },
  });
  const app = express();
  app.use(router);
  app.use(createUnmatchedRouteHandler(catalog));
  const destination = { write: (line: string) => void logged.push(line) };
  app.use(createErrorHandler(createLogger({ service: 'test', destination })));
  server = app.listen(0);
  await new Promise<void>((resolve) => server.once('listening', resolve));
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

describe('declared operations', () => {
  it('hands the handler the parsed query', async () => {
    const { status, body } = await call('/v1/things?platformKey=SHOP');
    expect(status).toBe(200);
    expect(body).toEqual({ got: 'SHOP' });
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

  it('answers 413 for a body over the route limit', async () => {
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
