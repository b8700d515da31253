import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testkit';
import { createIdentityIssuerCheck, describeIssuerFailure } from './identity-issuer-check.js';

// A real issuer on a local port whose discovery document can be turned off.
let server: Server;
let issuer: string;
let answering = true;
let asked = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked += 1;
    if (!answering || req.url !== '/x/.well-known/openid-configuration') {
      res.statusCode = 503;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ issuer }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the identity issuer check', () => {
  it('reports an issuer that answers, and one that does not with a reason safe to show', async () => {
    answering = true;
    const check = createIdentityIssuerCheck({ issuer, timeoutMs: 2000 });
    expect(check.environmentKey).toBe('PROD');
    expect(await check.check()).toMatchObject({ status: 'reachable' });
    answering = false;
    const down = await check.check();
    expect(down).toMatchObject({
      status: 'unreachable',
      error: "The identity provider's discovery document answered HTTP 503.",
    });
    // The start warning may add the client library's own words after the status.
    expect(describeIssuerFailure(down)).toMatch(
      /^The identity provider's discovery document answered HTTP 503\b/,
    );
  });

  it('names the system error of an issuer nothing listens on, and the address only in the log text', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const check = createIdentityIssuerCheck({
      issuer: `http://127.0.0.1:${port}`,
      timeoutMs: 2000,
    });
    const state = await check.check();
    expect(state).toMatchObject({
      status: 'unreachable',
      error: "The identity provider's discovery document is unreachable (ECONNREFUSED).",
    });
    expect(describeIssuerFailure(state)).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('never waits when asked for its state, and checks again only once the last result is stale', async () => {
    answering = true;
    const check = createIdentityIssuerCheck({ issuer, timeoutMs: 2000, freshForMs: 60_000 });
    const before = asked;
    expect(check.current()).toEqual({ status: 'unchecked' });
    expect(check.current()).toEqual({ status: 'unchecked' });
    await waitFor(async () => check.current().status === 'reachable', {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'the background check',
    });
    // One check for all of those calls, and none for the fresh result since.
    for (let call = 0; call < 5; call += 1) check.current();
    expect(asked - before).toBe(1);
  });
});
