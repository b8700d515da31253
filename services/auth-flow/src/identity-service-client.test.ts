import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { GatewayError } from '@gateway/errors';
import { unusedLocalPort } from '@gateway/testkit';
import { createIdentityServiceClient } from './identity-service-client.js';

// Spec 4.15 against a scripted HTTP server; the real development identity service is
// exercised end to end in services/all-in-one/src/user-admin-api.test.ts.

const KEY = 'an-identity-service-key-of-at-least-32-chars';
let server: Server;
let baseUrl = '';
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
const seen: { method: string; url: string; authorization: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization ?? '',
    });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const status = (code: number, body?: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.statusCode = code;
  res.setHeader('content-type', 'application/json');
  res.end(body === undefined ? undefined : JSON.stringify(body));
};

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GatewayError))
    throw new Error(`expected a GatewayError: ${String(error)}`);
  return error;
}

describe('createIdentityServiceClient', () => {
  const client = () => createIdentityServiceClient({ baseUrl, key: KEY, timeoutMs: 300 });

  it('posts to the action path with a fresh HS256 service token', async () => {
    answer = status(204);
    seen.length = 0;
    expect(await client().suspendUser('PROD', 'user/1')).toBe('done');
    expect(await client().revokeUserSessions('PROD', 'u2')).toBe('done');
    expect(seen.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'POST /internal/v1/environments/PROD/users/user%2F1/suspend',
      'POST /internal/v1/environments/PROD/users/u2/sessions/revoke',
    ]);
    const acts = [];
    for (const { authorization } of seen) {
      const token = authorization.replace(/^Bearer /, '');
      expect(decodeProtectedHeader(token).alg).toBe('HS256');
      const { payload } = await jwtVerify(token, new TextEncoder().encode(KEY), {
        issuer: 'svc-gateway',
        audience: 'svc-identity',
      });
      expect(payload.env).toBe('PROD');
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(60);
      acts.push(decodeJwt(token).act);
    }
    expect(acts).toEqual(['users.suspend', 'users.sessions.revoke']);
  });

  it('answers user_not_found for 404 IDENTITY_USER_NOT_FOUND', async () => {
    answer = status(404, { code: 'IDENTITY_USER_NOT_FOUND', message: 'No such user.' });
    expect(await client().revokeUserSessions('PROD', 'nobody')).toBe('user_not_found');
  });

  it('fails with IDENTITY_UNAVAILABLE on 5xx, a refused token, a wrong route or a time-out', async () => {
    const cases = [
      status(500, { code: 'INTERNAL_ERROR' }),
      status(503),
      status(401, { code: 'UNAUTHORIZED' }),
      status(404, { code: 'NOT_FOUND' }),
      () => undefined, // never answers
    ];
    for (const scripted of cases) {
      answer = scripted;
      const error = await failure(client().revokeUserSessions('PROD', 'u1'));
      expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    }
  });

  it('fails with IDENTITY_UNAVAILABLE when the service is unreachable', async () => {
    const unreachable = createIdentityServiceClient({
      baseUrl: `http://127.0.0.1:${await unusedLocalPort()}`,
      key: KEY,
      timeoutMs: 1000,
    });
    expect((await failure(unreachable.suspendUser('PROD', 'u1'))).code).toBe(
      'IDENTITY_UNAVAILABLE',
    );
  });
});
