// The two ways a caller reaches a service (createServiceTransport): one implementation with
// the services' own interceptors, called through Connect's router transport in process and
// over HTTP/2 (startServiceServer), must answer alike.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { isMessage, toJson } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createClient,
  type ConnectRouter,
  type Transport,
} from '@connectrpc/connect';
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
import { createHealthRoutes } from './health-service.js';
import { combineRoutes, createServiceInterceptors, type ServiceRoutes } from './service-routes.js';
import { startServiceServer, type ServiceServer } from './service-server.js';
import { createServiceTransport } from './service-transport.js';
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

/**
 * A small registry: GetIdentityEnvironment only (the other methods are left out on purpose),
 * failing as services fail, plus the real Health service.
 */
const routes: ServiceRoutes = combineRoutes(
  (router: ConnectRouter) => {
    router.service(RegistryService, {
      async getIdentityEnvironment(request, context) {
        seenHeaders.push(context.requestHeader);
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
        }
        // A partial init object, as implementations return them: most fields left out.
        return { environment: { environmentKey: request.environmentKey, displayName: 'Staging' } };
      },
    });
  },
  createHealthRoutes({
    serviceName: 'registry.v1.RegistryService',
    probes: [],
    probeTimeoutMs: 1_000,
  }),
);

const log = createMemoryLog();
const logger = createLogger({ service: 'in-process-test', destination: log.destination });
const spans = createMemorySpans();

const TIMEOUT_MS = 10_000;
let server: ServiceServer;
const modes = ['in-process', 'remote'] as const;
type Mode = (typeof modes)[number];

/** The two ways a caller reaches the service, as createServiceTransport builds them. */
function transportFor(mode: Mode, timeoutMs = TIMEOUT_MS): Transport {
  return mode === 'remote'
    ? createServiceTransport({ kind: 'remote', baseUrl: server.url }, { timeoutMs })
    : createServiceTransport(
        { kind: 'in-process', routes, serverInterceptors: createServiceInterceptors(logger) },
        { timeoutMs },
      );
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
  log.raw.length = 0;
  spans.exporter.reset();
});

describe.each(modes)('the same answers in process and over HTTP/2 (%s)', (mode) => {
  it('answers with the proto3 defaults filled in when the implementation returns a partial object', async () => {
    const client = createClient(RegistryService, transportFor(mode));
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
    const client = createClient(RegistryService, transportFor(mode));
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
    const client = createClient(RegistryService, transportFor(mode));
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
      const client = createClient(RegistryService, transportFor(mode, 100));
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
      const client = createClient(RegistryService, transportFor(mode, 100));
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
      const client = createClient(RegistryService, transportFor(mode, 60_000));
      const failure = await failureOf(
        client.getIdentityEnvironment({ environmentKey: 'SLOW' }, { timeoutMs: 100 }),
      );
      expect((failure as ConnectError).code).toBe(Code.DeadlineExceeded);
    } finally {
      slowGate.resolve();
    }
  });

  it('gives the handler the caller headers and the caller the response headers', async () => {
    const client = createClient(RegistryService, transportFor(mode));
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

  it('answers Unimplemented for a method the implementation left out', async () => {
    const client = createClient(RegistryService, transportFor(mode));
    const failure = await failureOf(client.listIdentityEnvironments({}));
    expect((failure as ConnectError).code).toBe(Code.Unimplemented);
    expect(fromConnectError(failure).code).toBe('INTERNAL_ERROR');
  });

  it('answers Unimplemented for a service that is not served at all', async () => {
    // Routes that serve Health only, as if the caller were pointed at the wrong service.
    const healthOnly: ServiceRoutes = (router) => router.service(Health, {});
    const other =
      mode === 'remote'
        ? await startLocalServiceServer(healthOnly, { service: 'in-process-test', logger })
        : undefined;
    try {
      const transport =
        other === undefined
          ? createServiceTransport(
              {
                kind: 'in-process',
                routes: healthOnly,
                serverInterceptors: createServiceInterceptors(logger),
              },
              { timeoutMs: TIMEOUT_MS },
            )
          : createServiceTransport({ kind: 'remote', baseUrl: other.url }, { timeoutMs: 5_000 });
      const client = createClient(RegistryService, transport);
      const failure = await failureOf(client.getIdentityEnvironment({ environmentKey: 'X' }));
      expect((failure as ConnectError).code).toBe(Code.Unimplemented);
    } finally {
      await other?.close();
    }
  });

  it('serves the real Health service next to it', async () => {
    const client = createClient(Health, transportFor(mode));
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
      const client = createClient(RegistryService, transportFor(mode));
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
    expect(await outcome('in-process')).toEqual(await outcome('remote'));
  });
});

describe('a service that cannot be reached', () => {
  it('fails the call SERVICE_UNAVAILABLE, and the next call reaches it once it is up', async () => {
    const gone = await startLocalServiceServer(routes, { service: 'in-process-test', logger });
    const { url, port } = gone;
    await gone.close();
    const client = createClient(
      RegistryService,
      createServiceTransport({ kind: 'remote', baseUrl: url }, { timeoutMs: TIMEOUT_MS }),
    );
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
