import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createRequestIdMiddleware,
  getRequestId,
  isAcceptedRequestId,
} from './request-id-middleware.js';
import { startMiddlewareServer } from './testing/middleware-server.js';
import type { MiddlewareServer } from './testing/middleware-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createRequestIdMiddleware', () => {
  let server: MiddlewareServer;

  beforeAll(async () => {
    server = await startMiddlewareServer(
      [createRequestIdMiddleware()],
      [
        {
          method: 'GET',
          path: '/echo-id',
          handler(_req, res) {
            res.end(JSON.stringify({ locals: getRequestId(res) }));
          },
        },
      ],
    );
  });

  afterAll(async () => {
    await server.close();
  });

  async function requestWith(
    headers: Record<string, string> = {},
  ): Promise<{ header: string | null; locals: unknown }> {
    const response = await fetch(`${server.url}/echo-id`, { headers });
    const body = (await response.json()) as { locals: unknown };
    return { header: response.headers.get('x-request-id'), locals: body.locals };
  }

  it('keeps a valid incoming x-request-id and echoes it', async () => {
    const incoming = 'edge-7f3a.b_c-9';

    await expect(requestWith({ 'x-request-id': incoming })).resolves.toEqual({
      header: incoming,
      locals: incoming,
    });
  });

  it.each([
    ['too long', 'a'.repeat(129)],
    ['with a space', 'abc def'],
    ['with markup', '<script>alert(1)</script>'],
    ['with a colon', 'id:1'],
  ])('replaces an incoming id %s with a fresh UUID', async (_label, incoming) => {
    const { header, locals } = await requestWith({ 'x-request-id': incoming });

    expect(header).toMatch(UUID);
    expect(locals).toBe(header);
  });

  it('generates a different UUID for each request without an id', async () => {
    const first = await requestWith();
    const second = await requestWith();

    expect(first.header).toMatch(UUID);
    expect(first.locals).toBe(first.header);
    expect(second.header).not.toBe(first.header);
  });
});

describe('isAcceptedRequestId', () => {
  it('accepts 1 to 128 characters of A-Z a-z 0-9 . _ -', () => {
    expect(isAcceptedRequestId('a')).toBe(true);
    expect(isAcceptedRequestId('A.b_C-9'.padEnd(128, 'x'))).toBe(true);
    expect(isAcceptedRequestId('')).toBe(false);
    expect(isAcceptedRequestId('x'.repeat(129))).toBe(false);
    expect(isAcceptedRequestId('a\nb')).toBe(false);
    expect(isAcceptedRequestId(['a', 'b'])).toBe(false);
    expect(isAcceptedRequestId(undefined)).toBe(false);
  });
});
