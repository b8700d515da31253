import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import {
  startTestOpenIdProvider,
  unusedLocalPort,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import { fetchDiscoveryDocument } from './discovery-document.js';

async function failureOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('fetchDiscoveryDocument', () => {
  let provider: TestOpenIdProvider;
  let wrongIssuer: TestOpenIdProvider;
  // A misbehaving provider of the test's own: answers whatever `reply` says.
  let broken: Server;
  let brokenUrl: string;
  const requestedPaths: string[] = [];
  let reply: { status: number; type: string; body: string } = {
    status: 200,
    type: 'application/json',
    body: '{}',
  };
  // Accepts connections and never answers.
  const silentSockets: Socket[] = [];
  const silent = createTcpServer((socket) => silentSockets.push(socket));
  let silentUrl: string;

  beforeAll(async () => {
    [provider, wrongIssuer] = await Promise.all([
      startTestOpenIdProvider({ signingAlg: 'ES256' }),
      startTestOpenIdProvider({ signingAlg: 'ES256', advertisedIssuer: 'https://other.example' }),
    ]);
    broken = createHttpServer((req, res) => {
      requestedPaths.push(req.url ?? '');
      res.writeHead(reply.status, { 'content-type': reply.type });
      res.end(reply.body);
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/idp`;
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/idp`;
  });
  afterAll(async () => {
    for (const socket of silentSockets) socket.destroy();
    broken.closeAllConnections();
    await Promise.all([
      provider.close(),
      wrongIssuer.close(),
      new Promise((resolve) => broken.close(resolve)),
      new Promise((resolve) => silent.close(resolve)),
    ]);
  });

  it('reads a real provider’s document', async () => {
    const document = await fetchDiscoveryDocument(provider.issuer, { timeoutMs: 2_000 });
    expect(document).toMatchObject({
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer}/auth`,
      token_endpoint: `${provider.issuer}/oauth2/token`,
      end_session_endpoint: `${provider.issuer}/session/end`,
      jwks_uri: `${provider.issuer}/jwks`,
    });
    // Unknown members are kept.
    expect(document.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'client_credentials']),
    );
  });

  it('refuses a document that names another issuer (IDENTITY_DISCOVERY_INVALID)', async () => {
    const error = await failureOf(fetchDiscoveryDocument(wrongIssuer.issuer, { timeoutMs: 2_000 }));
    expect(error.code).toBe('IDENTITY_DISCOVERY_INVALID');
    expect(error.status).toBe(502);
    expect(error.details).toEqual({
      issuer: wrongIssuer.issuer,
      reportedIssuer: 'https://other.example',
    });
  });

  it('compares the issuer exactly (a trailing slash is another issuer)', async () => {
    const error = await failureOf(
      fetchDiscoveryDocument(`${provider.issuer}/`, { timeoutMs: 2_000 }),
    );
    expect(error.code).toBe('IDENTITY_DISCOVERY_INVALID');
  });

  it('fails fast with IDENTITY_UNAVAILABLE when nothing listens', async () => {
    const started = Date.now();
    const port = await unusedLocalPort();
    const error = await failureOf(
      fetchDiscoveryDocument(`http://127.0.0.1:${port}/idp`, { timeoutMs: 5_000 }),
    );
    expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    expect(error.status).toBe(503);
    expect(error.message).toBe("The identity provider's discovery document is unreachable.");
    // A refused connection answers at once, not at the 5 s time-out.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('gives up after timeoutMs with IDENTITY_UNAVAILABLE', async () => {
    const error = await failureOf(fetchDiscoveryDocument(silentUrl, { timeoutMs: 200 }));
    expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it.each([
    [{ status: 500, type: 'text/plain', body: 'secret stack trace' }, 'answered HTTP 500'],
    [{ status: 302, type: 'text/plain', body: '' }, 'answered HTTP 302'],
    [{ status: 200, type: 'text/html', body: '<html>secret</html>' }, 'did not answer JSON'],
  ])('IDENTITY_UNAVAILABLE when the provider answers %j', async (answer, reason) => {
    reply = answer;
    const error = await failureOf(fetchDiscoveryDocument(brokenUrl, { timeoutMs: 2_000 }));
    expect(error.code).toBe('IDENTITY_UNAVAILABLE');
    expect(error.message).toBe(`The identity provider's discovery document ${reason}.`);
    expect(error.message).not.toContain('secret');
  });

  it('IDENTITY_DISCOVERY_INVALID for JSON that is not a discovery document', async () => {
    reply = { status: 200, type: 'application/json', body: '[1, 2]' };
    expect((await failureOf(fetchDiscoveryDocument(brokenUrl, { timeoutMs: 2_000 }))).code).toBe(
      'IDENTITY_DISCOVERY_INVALID',
    );
  });
  it('keeps endpoints that are http(s) URLs and drops null ones', async () => {
    reply = {
      status: 200,
      type: 'application/json',
      body: JSON.stringify({
        issuer: brokenUrl,
        jwks_uri: `${brokenUrl}/jwks`,
        end_session_endpoint: null,
        extra: 1,
      }),
    };
    expect(await fetchDiscoveryDocument(brokenUrl, { timeoutMs: 2_000 })).toEqual({
      issuer: brokenUrl,
      jwks_uri: `${brokenUrl}/jwks`,
      extra: 1,
    });
  });

  it.each([
    [{}, 'is not a valid discovery document'],
    [{ issuer: 42 }, 'is not a valid discovery document'],
    [{ token_endpoint: 'javascript:alert(1)' }, 'invalid token_endpoint'],
    [{ jwks_uri: ['x'] }, 'invalid jwks_uri'],
  ])('IDENTITY_DISCOVERY_INVALID for %j', async (document, reason) => {
    const body =
      'issuer' in document || Object.keys(document).length === 0
        ? document
        : { issuer: brokenUrl, ...document };
    reply = { status: 200, type: 'application/json', body: JSON.stringify(body) };
    const error = await failureOf(fetchDiscoveryDocument(brokenUrl, { timeoutMs: 2_000 }));
    expect(error.code).toBe('IDENTITY_DISCOVERY_INVALID');
    expect(error.message).toContain(reason);
  });

  it('asks <issuer>/.well-known/openid-configuration, without doubling a trailing slash', async () => {
    reply = {
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ issuer: `${brokenUrl}/` }),
    };
    expect((await fetchDiscoveryDocument(`${brokenUrl}/`, { timeoutMs: 2_000 })).issuer).toBe(
      `${brokenUrl}/`,
    );
    expect(requestedPaths.at(-1)).toBe('/idp/.well-known/openid-configuration');
  });
});
