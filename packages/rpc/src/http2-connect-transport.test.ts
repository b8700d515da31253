// Coalescing in the HTTP/2 transport (issue 8): identical calls of one turn of the event loop
// share one request, and a call never joins one that was already sent (so it sees what was
// written before it started, e.g. a revocation). Real HTTP/2 on 127.0.0.1.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ConnectError } from '@connectrpc/connect';
import { Code, createClient, type ConnectRouter } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { createHttp2ConnectTransport } from './http2-connect-transport.js';
import { startLocalRpcServer } from './testing/local-rpc-server.js';
import type { RpcServer } from './rpc-server.js';

/** Requests the implementation received, by environment key. */
const received: string[] = [];
/** What `STATE` answers: the display name read when the request arrives. */
let state = 'before';
/** Holds calls (after they read the state) while the test holds it. */
function heldGate() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}
function openGate() {
  const gate = heldGate();
  gate.release();
  return gate;
}
let gate = openGate();

const routes = (router: ConnectRouter) => {
  router.service(RegistryService, {
    async getIdentityEnvironment(request) {
      received.push(request.environmentKey);
      const seen = state;
      if (request.environmentKey === 'MISSING') {
        throw new GatewayError('NOT_FOUND', 'No such environment.');
      }
      await gate.released;
      return { environment: { environmentKey: request.environmentKey, displayName: seen } };
    },
    async getPlatform(request) {
      received.push(`platform:${request.platformKey}`);
      return { platform: { platformKey: request.platformKey } };
    },
  });
};

let server: RpcServer;

beforeAll(async () => {
  server = await startLocalRpcServer(routes, { service: 'coalescing-test' });
});
afterAll(async () => {
  gate.release();
  await server?.close();
});
beforeEach(() => {
  received.length = 0;
  state = 'before';
  gate.release();
  gate = openGate();
});

function clientWith(timeoutMs = 5_000, coalesce = true) {
  const transport = createHttp2ConnectTransport({
    baseUrl: server.url,
    interceptors: [],
    defaultTimeoutMs: timeoutMs,
    pingIntervalMs: 60_000,
    pingTimeoutMs: 5_000,
    ...(coalesce ? { coalesce: [RegistryService.method.getIdentityEnvironment] } : {}),
  });
  return createClient(RegistryService, transport);
}

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescing identical calls', () => {
  it('sends identical calls of one turn once, and answers every caller', async () => {
    const client = clientWith();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => client.getIdentityEnvironment({ environmentKey: 'A' })),
    );
    expect(received).toEqual(['A']);
    for (const answer of answers) expect(answer.environment?.environmentKey).toBe('A');
  });

  it('sends calls that ask different things separately', async () => {
    const client = clientWith();
    const answers = await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'A' }),
      client.getIdentityEnvironment({ environmentKey: 'B' }),
      client.getIdentityEnvironment({ environmentKey: 'A' }),
    ]);
    expect([...received].sort()).toEqual(['A', 'B']);
    expect(answers.map((answer) => answer.environment?.environmentKey)).toEqual(['A', 'B', 'A']);
  });

  it('never joins a call that was sent: a later call sees what was written before it started', async () => {
    const client = clientWith();
    gate = heldGate();
    // The first call reaches the service, reads the state and is held there.
    const first = client.getIdentityEnvironment({ environmentKey: 'STATE' });
    while (received.length === 0) await nextTurn();
    // A write (a revocation, say) completes; an identical call starts after it.
    state = 'after';
    const second = client.getIdentityEnvironment({ environmentKey: 'STATE' });
    while (received.length < 2) await nextTurn();
    gate.release();
    expect((await first).environment?.displayName).toBe('before');
    expect((await second).environment?.displayName).toBe('after');
    expect(received).toEqual(['STATE', 'STATE']);
  });

  it('gives every caller the error of the shared call', async () => {
    const client = clientWith();
    const failures = await Promise.all([
      failureOf(client.getIdentityEnvironment({ environmentKey: 'MISSING' })),
      failureOf(client.getIdentityEnvironment({ environmentKey: 'MISSING' })),
    ]);
    expect(received).toEqual(['MISSING']);
    for (const failure of failures) expect((failure as ConnectError).code).toBe(Code.NotFound);
  });

  it('keeps each caller’s deadline', async () => {
    // The deadline is long enough for the request to reach the service on a loaded machine
    // (CI runs the suites side by side): only the held answer is to miss it.
    const client = clientWith(500);
    gate = heldGate();
    const started = Date.now();
    const failures = await Promise.all([
      failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' })),
      failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' })),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    for (const failure of failures) {
      expect((failure as ConnectError).code).toBe(Code.DeadlineExceeded);
    }
    expect(received).toEqual(['SLOW']);
    // A call with a deadline of its own is not joined with the default's. Both deadlines are
    // roomy, so neither call can fail on a slow machine.
    gate.release();
    gate = openGate();
    received.length = 0;
    const roomy = clientWith(5_000);
    await Promise.all([
      roomy.getIdentityEnvironment({ environmentKey: 'A' }),
      roomy.getIdentityEnvironment({ environmentKey: 'A' }, { timeoutMs: 10_000 }),
    ]);
    expect(received).toEqual(['A', 'A']);
  });

  it('does not coalesce calls that carry headers (trace context), methods not listed, or without the option', async () => {
    const client = clientWith();
    await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'A' }, { headers: { 'x-one': '1' } }),
      client.getIdentityEnvironment({ environmentKey: 'A' }, { headers: { 'x-one': '1' } }),
      client.getPlatform({ platformKey: 'P' }),
      client.getPlatform({ platformKey: 'P' }),
    ]);
    expect(received.filter((key) => key === 'A')).toHaveLength(2);
    expect(received.filter((key) => key === 'platform:P')).toHaveLength(2);
    received.length = 0;
    const plain = clientWith(5_000, false);
    await Promise.all([
      plain.getIdentityEnvironment({ environmentKey: 'A' }),
      plain.getIdentityEnvironment({ environmentKey: 'A' }),
    ]);
    expect(received).toEqual(['A', 'A']);
  });
});
