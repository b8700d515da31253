// The ways a caller reaches a service: one implementation with the services' own
// interceptors, called over HTTP/2 (startServiceServer) and in process (connectService, which
// hands the call straight to the implementation through createDirectClient), must answer alike.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { isMessage, toJson } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client, type ServiceImpl } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import {
  GetIdentityEnvironmentResponseSchema,
  Health,
  HealthCheckResponse_ServingStatus,
  RegistryService,
} from '@gateway/contracts';
import { GatewayError, fromConnectError } from '@gateway/errors';
import { createLogger, shutdownTelemetry, startTelemetry } from '@gateway/telemetry';
import { createMemoryLog, createMemorySpans, waitForSpans } from '@gateway/telemetry/testing';
import { callerDeadline } from './caller-deadline.js';
import { createDirectClient } from './direct-client.js';
import { createHealthImplementation } from './health-service.js';
import { connectService } from './service-connection.js';
import {
  implementationOf,
  routesOf,
  type ServiceImplementation,
} from './service-implementations.js';
import { createServiceInterceptors } from './service-interceptors.js';
import { startServiceServer, type ServiceServer } from './service-server.js';
import { startLocalServiceServer } from './testing/local-service-server.js';

const GET_ENVIRONMENT = 'registry.v1.RegistryService/GetIdentityEnvironment';
const INACTIVE_DETAILS = {
  environmentKey: 'STAGING',
  platforms: ['A', 'B'],
  platformCount: 2,
  nested: { active: false, note: null },
};

/** A promise the test settles when it wants to. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => (resolve = res));
  return { promise, resolve };
}

/** Held by the `SLOW` environment until the test lets it go. */
let slowGate = deferred();
/** What the handler saw of its request headers, per call. */
const seenHeaders: Headers[] = [];
/** The caller's deadline as the handler saw it, per call. */
const seenDeadlines: Array<number | undefined> = [];

/**
 * A small registry: GetIdentityEnvironment only (the other methods are left out on purpose),
 * failing as services fail.
 */
const registryImpl: Partial<ServiceImpl<typeof RegistryService>> = {
  async getIdentityEnvironment(request, context) {
    seenHeaders.push(context.requestHeader);
    seenDeadlines.push(callerDeadline(context));
    context.responseHeader.set('x-served-by', 'test-registry');
    switch (request.environmentKey) {
      case 'INACTIVE':
        throw new GatewayError(
          'IDENTITY_ENVIRONMENT_INACTIVE',
          'Identity environment is inactive.',
          { details: INACTIVE_DETAILS },
        );
      case 'BUG':
        throw new Error('connection string postgres://user:hunter2@db/x broke');
      case 'SLOW':
        await slowGate.promise;
        break;
      case 'LARGE':
        return { environment: { environmentKey: 'LARGE', displayName: 'x'.repeat(8_000) } };
    }
    // A partial init object, as implementations return them: most fields left out.
    return { environment: { environmentKey: request.environmentKey, displayName: 'Staging' } };
  },
};

/** The registry's implementation, with the real Health service next to it. */
const implementations: readonly ServiceImplementation[] = [
  implementationOf(RegistryService, registryImpl),
  createHealthImplementation({
    serviceName: 'registry.v1.RegistryService',
    probes: [],
    probeTimeoutMs: 1_000,
  }),
];
const routes = routesOf(implementations);

const log = createMemoryLog();
const logger = createLogger({ service: 'in-process-test', destination: log.destination });
const spans = createMemorySpans();

const TIMEOUT_MS = 10_000;
let server: ServiceServer;
const modes = ['in-process', 'remote'] as const;
type Mode = (typeof modes)[number];

/** The connection of a mode, as connectService builds it. */
function connectionFor(mode: Mode, timeoutMs = TIMEOUT_MS) {
  return mode === 'remote'
    ? connectService({ kind: 'remote', baseUrl: server.url }, { timeoutMs })
    : connectService(
        {
          kind: 'in-process',
          implementations,
          serverInterceptors: createServiceInterceptors(logger),
        },
        { timeoutMs },
      );
}

/** The registry's client in each of the ways a caller reaches it. */
function registryClient(mode: Mode, timeoutMs = TIMEOUT_MS): Client<typeof RegistryService> {
  return connectionFor(mode, timeoutMs).client(RegistryService);
}

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );

beforeAll(async () => {
  startTelemetry({ serviceName: 'in-process-test', spanProcessors: [spans.processor] });
  server = await startLocalServiceServer(routes, { service: 'in-process-test', logger });
});
afterAll(async () => {
  slowGate.resolve();
  await server?.close();
  await shutdownTelemetry();
});
beforeEach(() => {
  seenHeaders.length = 0;
  seenDeadlines.length = 0;
  log.raw.length = 0;
  spans.exporter.reset();
});

describe.each(modes)('the same answers in process and over HTTP/2 (%s)', (mode) => {
  it('answers with the proto3 defaults filled in when the implementation returns a partial object', async () => {
    const client = registryClient(mode);
    const answer = await client.getIdentityEnvironment({ environmentKey: 'STAGING' });
    expect(isMessage(answer, GetIdentityEnvironmentResponseSchema)).toBe(true);
    expect(answer.environment).toMatchObject({
      environmentKey: 'STAGING',
      displayName: 'Staging',
      id: '',
      tier: '',
      active: false,
      platformCount: 0,
      platforms: [],
    });
    expect(answer.environment?.postLogoutRedirectUri).toBeUndefined();
  });

  it('passes a GatewayError to the caller with its spec code, message and details', async () => {
    const client = registryClient(mode);
    const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'INACTIVE' }));
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.FailedPrecondition);
    const error = fromConnectError(failure);
    expect(error.toBody()).toEqual({
      code: 'IDENTITY_ENVIRONMENT_INACTIVE',
      message: 'Identity environment is inactive.',
      details: INACTIVE_DETAILS,
    });
    expect(error.status).toBe(409);
  });

  it('turns an unexpected Error into INTERNAL_ERROR without its message, and logs it', async () => {
    const client = registryClient(mode);
    const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'BUG' }));
    expect((failure as ConnectError).code).toBe(Code.Internal);
    expect((failure as ConnectError).message).not.toContain('hunter2');
    expect(fromConnectError(failure).toBody()).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'Internal error.',
    });
    const logged = log.lines().filter((line) => line.msg === 'unexpected error');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'error', procedure: GET_ENVIRONMENT });
  });

  it('answers DeadlineExceeded (SERVICE_UNAVAILABLE) when the implementation is slower than timeoutMs', async () => {
    slowGate = deferred();
    try {
      const client = registryClient(mode, 100);
      // The implementation is held until the test ends: only the deadline ends the call.
      const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' }));
      expect((failure as ConnectError).code).toBe(Code.DeadlineExceeded);
      const error = fromConnectError(failure);
      expect(error.code).toBe('SERVICE_UNAVAILABLE');
      expect(error.status).toBe(503);
    } finally {
      slowGate.resolve();
    }
  });

  it("ends the caller's CLIENT span as deadline_exceeded when the deadline passes", async () => {
    slowGate = deferred();
    try {
      const client = registryClient(mode, 100);
      await failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' }));
      // Judged as things stand when the caller got its answer (the implementation is still
      // held): the client interceptor's span (the one naming the server it called) has ended
      // with the deadline's code, as the edge's traces and dependency metrics expect.
      const ended = await waitForSpans(spans.exporter, 1, 1_000);
      const clientSpans = ended.filter((span) => 'server.address' in span.attributes);
      expect(clientSpans.map((span) => span.name)).toEqual([GET_ENVIRONMENT]);
      expect(clientSpans[0]?.attributes['error.type']).toBe(codeToString(Code.DeadlineExceeded));
    } finally {
      slowGate.resolve();
    }
  });

  it('passes a per-call timeoutMs over the transport default', async () => {
    slowGate = deferred();
    try {
      const client = registryClient(mode, 60_000);
      const failure = await failureOf(
        client.getIdentityEnvironment({ environmentKey: 'SLOW' }, { timeoutMs: 100 }),
      );
      expect((failure as ConnectError).code).toBe(Code.DeadlineExceeded);
    } finally {
      slowGate.resolve();
    }
  });

  it('gives the handler the caller headers and the caller the response headers', async () => {
    const client = registryClient(mode);
    let responseHeader: Headers | undefined;
    await client.getIdentityEnvironment(
      { environmentKey: 'STAGING' },
      { headers: { 'x-request-id': 'req-1' }, onHeader: (header) => (responseHeader = header) },
    );
    expect(seenHeaders[0]?.get('x-request-id')).toBe('req-1');
    // The client tracing interceptor's trace context reaches the server.
    expect(seenHeaders[0]?.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(responseHeader?.get('x-served-by')).toBe('test-registry');
  });

  it("gives the handler its caller's deadline (callerDeadline): the transport's time-out, or the call's own", async () => {
    const before = Date.now();
    await registryClient(mode).getIdentityEnvironment({ environmentKey: 'STAGING' });
    await registryClient(mode).getIdentityEnvironment(
      { environmentKey: 'STAGING' },
      { timeoutMs: 60_000 },
    );
    const after = Date.now();
    const [transportDefault, perCall] = seenDeadlines;
    // Seconds of room: the deadline is the call's start plus its time-out.
    expect(transportDefault).toBeGreaterThan(before + TIMEOUT_MS - 2_000);
    expect(transportDefault).toBeLessThanOrEqual(after + TIMEOUT_MS);
    expect(perCall).toBeGreaterThan(before + 60_000 - 2_000);
    expect(perCall).toBeLessThanOrEqual(after + 60_000);
  });

  it('answers Unimplemented for a method the implementation left out', async () => {
    const client = registryClient(mode);
    const failure = await failureOf(client.listIdentityEnvironments({}));
    expect((failure as ConnectError).code).toBe(Code.Unimplemented);
    expect(fromConnectError(failure).code).toBe('INTERNAL_ERROR');
  });
});

describe.each(modes)('a connection (%s)', (mode) => {
  it('answers Unimplemented for a service that is not served at all', async () => {
    // A target that serves Health only, as if the caller were pointed at the wrong service.
    const healthOnly = [implementationOf(Health, {})];
    const other =
      mode === 'remote'
        ? await startLocalServiceServer(routesOf(healthOnly), {
            service: 'in-process-test',
            logger,
          })
        : undefined;
    try {
      const connection =
        other === undefined
          ? connectService(
              {
                kind: 'in-process',
                implementations: healthOnly,
                serverInterceptors: createServiceInterceptors(logger),
              },
              { timeoutMs: TIMEOUT_MS },
            )
          : connectService({ kind: 'remote', baseUrl: other.url }, { timeoutMs: 5_000 });
      const client = connection.client(RegistryService);
      const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'X' }));
      expect((failure as ConnectError).code).toBe(Code.Unimplemented);
    } finally {
      await other?.close();
    }
  });

  it('answers a large message uncompressed', async () => {
    let encoding: string | null | undefined;
    const answer = await connectionFor(mode)
      .client(RegistryService)
      .getIdentityEnvironment(
        { environmentKey: 'LARGE' },
        { onHeader: (header) => (encoding = header.get('content-encoding')) },
      );
    expect(answer.environment?.displayName).toHaveLength(8_000);
    expect(encoding ?? null).toBeNull();
  });

  it('serves the real Health service next to it', async () => {
    const client = connectionFor(mode).client(Health);
    const answer = await client.check({ service: 'registry.v1.RegistryService' });
    expect(answer.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});

describe('in process and over HTTP/2 agree', () => {
  it.each([
    ['an answer', 'STAGING'],
    ['a GatewayError', 'INACTIVE'],
    ['an unexpected Error', 'BUG'],
  ])('on %s', async (_what, environmentKey) => {
    const outcome = async (mode: Mode) => {
      const client = registryClient(mode);
      try {
        const answer = await client.getIdentityEnvironment({ environmentKey });
        return {
          answer: toJson(GetIdentityEnvironmentResponseSchema, answer, {
            alwaysEmitImplicit: true,
          }),
        };
      } catch (error) {
        return { code: (error as ConnectError).code, body: fromConnectError(error).toBody() };
      }
    };
    const remote = await outcome('remote');
    expect(await outcome('in-process')).toEqual(remote);
  });
});

describe('createDirectClient', () => {
  it('answers Unimplemented for streaming methods, and serves the unary ones', async () => {
    const health: ServiceImpl<typeof Health> = {
      check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }),
      async *watch() {
        yield { status: HealthCheckResponse_ServingStatus.SERVING };
      },
    };
    const client = createDirectClient(Health, health, {
      serverInterceptors: createServiceInterceptors(logger),
      timeoutMs: TIMEOUT_MS,
    });
    const failure = await failureOf(
      (async () => {
        for await (const answer of client.watch({})) expect(answer).toBeUndefined();
      })(),
    );
    expect((failure as ConnectError).code).toBe(Code.Unimplemented);
    expect((await client.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it('answers Canceled when the caller aborts the call', async () => {
    slowGate = deferred();
    try {
      const caller = new AbortController();
      const call = registryClient('in-process').getIdentityEnvironment(
        { environmentKey: 'SLOW' },
        { signal: caller.signal },
      );
      caller.abort();
      expect(((await failureOf(call)) as ConnectError).code).toBe(Code.Canceled);
    } finally {
      slowGate.resolve();
    }
  });

  it('leaves no timer behind after a call that answered in time, or failed in time', async () => {
    const timers = () =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    // The memory span exporter answers each export on a 0 ms timer: let those pass first.
    const settledTimers = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 0));
      return timers();
    };
    const client = registryClient('in-process', 60_000);
    const before = await settledTimers();

    // While a call is under way its deadline is a timer (the check sees timers at all)...
    slowGate = deferred();
    const slow = client.getIdentityEnvironment({ environmentKey: 'SLOW' });
    expect(timers()).toBe(before + 1);
    slowGate.resolve();
    await slow;
    // ...and none is left once calls are done, whether they answered or failed.
    expect(await settledTimers()).toBe(before);
    await client.getIdentityEnvironment({ environmentKey: 'STAGING' });
    await failureOf(client.getIdentityEnvironment({ environmentKey: 'INACTIVE' }));
    expect(await settledTimers()).toBe(before);
  });
});

describe('a service that cannot be reached', () => {
  it('fails the call SERVICE_UNAVAILABLE, and the next call reaches it once it is up', async () => {
    const gone = await startLocalServiceServer(routes, { service: 'in-process-test', logger });
    const { url, port } = gone;
    await gone.close();
    const client = connectService(
      { kind: 'remote', baseUrl: url },
      { timeoutMs: TIMEOUT_MS },
    ).client(RegistryService);
    const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'STAGING' }));
    // (connect-node answers UNAVAILABLE; under Jest it cannot recognise node's error objects
    // and answers INTERNAL with the refused connection as the cause, read the same way.)
    expect(fromConnectError(failure).code).toBe('SERVICE_UNAVAILABLE');
    expect(fromConnectError(failure).status).toBe(503);
    const back = await startServiceServer({
      routes,
      interceptors: createServiceInterceptors(logger),
      port,
      host: '127.0.0.1',
    });
    try {
      const answer = await client.getIdentityEnvironment({ environmentKey: 'STAGING' });
      expect(answer.environment?.environmentKey).toBe('STAGING');
    } finally {
      await back.close();
    }
  });
});
