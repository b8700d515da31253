import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startTestOpenIdProvider,
  unusedLocalPort,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import {
  runIdentityEnvironmentChecks,
  type IdentityEnvironmentCheckInput,
} from './identity-environment-checks.js';

let good: TestOpenIdProvider;
let wrongIssuer: TestOpenIdProvider;
let noEndSession: TestOpenIdProvider;
let emptyJwks: TestOpenIdProvider;
// Accepts connections and never answers.
const silentSockets: Socket[] = [];
const silent = createServer((socket) => silentSockets.push(socket));

beforeAll(async () => {
  [good, wrongIssuer, noEndSession, emptyJwks] = await Promise.all([
    startTestOpenIdProvider({ signingAlg: 'ES256' }),
    startTestOpenIdProvider({ signingAlg: 'ES256', advertisedIssuer: 'https://elsewhere.example' }),
    startTestOpenIdProvider({ signingAlg: 'ES256', omitEndSessionEndpoint: true }),
    startTestOpenIdProvider({ signingAlg: 'ES256', emptyJwks: true }),
  ]);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  await Promise.all([
    good.close(),
    wrongIssuer.close(),
    noEndSession.close(),
    emptyJwks.close(),
    new Promise((resolve) => silent.close(resolve)),
  ]);
});

const input = (overrides: Partial<IdentityEnvironmentCheckInput>) => ({
  issuer: good.issuer,
  oidcClientId: 'gateway',
  clientSecretConfigured: true,
  secretDecrypts: true,
  timeoutMs: 2_000,
  ...overrides,
});

async function statuses(overrides: Partial<IdentityEnvironmentCheckInput>) {
  const result = await runIdentityEnvironmentChecks(input(overrides));
  return {
    ok: result.ok,
    statuses: Object.fromEntries(result.checks.map((check) => [check.name, check.status])),
    messages: Object.fromEntries(result.checks.map((check) => [check.name, check.message])),
  };
}

describe('runIdentityEnvironmentChecks', () => {
  it('passes all five checks, in the spec’s order, on a good provider', async () => {
    const result = await runIdentityEnvironmentChecks(input({}));
    expect(result.ok).toBe(true);
    expect(result.checks.map((check) => [check.name, check.status])).toEqual([
      ['discovery', 'pass'],
      ['endpoints', 'pass'],
      ['jwks', 'pass'],
      ['client', 'pass'],
      ['secret', 'pass'],
    ]);
    expect(result.checks[2]?.message).toBe('jwks_uri publishes 1 key.');
  });

  it('fails discovery (and what depends on it) when the provider names another issuer', async () => {
    const result = await statuses({ issuer: wrongIssuer.issuer });
    expect(result.ok).toBe(false);
    expect(result.statuses).toEqual({
      discovery: 'fail',
      endpoints: 'fail',
      jwks: 'fail',
      client: 'pass',
      secret: 'pass',
    });
    expect(result.messages.discovery).toBe(
      `The discovery document names the issuer "https://elsewhere.example", not "${wrongIssuer.issuer}".`,
    );
    expect(result.messages.endpoints).toBe('Not checked: the discovery check failed.');
  });

  it('fails endpoints, naming end_session_endpoint, when it is not advertised', async () => {
    const result = await statuses({ issuer: noEndSession.issuer });
    expect(result.ok).toBe(false);
    expect(result.statuses).toMatchObject({ discovery: 'pass', endpoints: 'fail', jwks: 'pass' });
    expect(result.messages.endpoints).toBe(
      'The discovery document does not advertise end_session_endpoint.',
    );
  });

  it('fails jwks when the key set is empty', async () => {
    const result = await statuses({ issuer: emptyJwks.issuer });
    expect(result.ok).toBe(false);
    expect(result.statuses).toMatchObject({ discovery: 'pass', endpoints: 'pass', jwks: 'fail' });
    expect(result.messages.jwks).toBe('jwks_uri publishes no keys.');
  });

  it.each([
    [{ oidcClientId: null }, 'No client ID is configured.'],
    [{ oidcClientId: '' }, 'No client ID is configured.'],
    [{ clientSecretConfigured: false }, 'No client secret is configured.'],
    [
      { oidcClientId: null, clientSecretConfigured: false },
      'No client ID and no client secret is configured.',
    ],
  ])('fails client for %j', async (overrides, message) => {
    const result = await statuses(overrides);
    expect(result.ok).toBe(false);
    expect(result.statuses.client).toBe('fail');
    expect(result.messages.client).toBe(message);
  });

  it('fails secret when the stored secret does not decrypt, and says to re-enter it', async () => {
    const result = await statuses({ secretDecrypts: false });
    expect(result.ok).toBe(false);
    expect(result.statuses.secret).toBe('fail');
    expect(result.messages.secret).toMatch(/re-enter it with PATCH/);
  });

  it('skips secret when there is no stored secret (still ok)', async () => {
    const result = await statuses({ secretDecrypts: null });
    expect(result.ok).toBe(true);
    expect(result.statuses.secret).toBe('skip');
  });

  it('reports an unreachable provider quickly instead of throwing', async () => {
    const started = Date.now();
    const port = await unusedLocalPort();
    const result = await statuses({ issuer: `http://127.0.0.1:${port}/idp`, timeoutMs: 10_000 });
    expect(result.ok).toBe(false);
    expect(result.statuses).toMatchObject({ discovery: 'fail', endpoints: 'fail', jwks: 'fail' });
    expect(result.messages.discovery).toBe(
      "The identity provider's discovery document is unreachable.",
    );
    // A refused connection answers at once, not at the time-out.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('bounds each call by timeoutMs', async () => {
    const port = (silent.address() as AddressInfo).port;
    const result = await statuses({ issuer: `http://127.0.0.1:${port}/idp`, timeoutMs: 200 });
    expect(result.statuses.discovery).toBe('fail');
    expect(result.messages.discovery).toContain('did not answer within 200 ms');
  });
});
