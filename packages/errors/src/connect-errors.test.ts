import { createServer, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type ConnectRouter,
} from '@connectrpc/connect';
import {
  connectNodeAdapter,
  createConnectTransport,
  createGrpcTransport,
} from '@connectrpc/connect-node';
import { Health, HealthCheckResponse_ServingStatus } from '@gateway/contracts';
import { createErrorInterceptor, fromConnectError } from './connect-errors.js';
import { errorStatusByCode } from './error-codes.js';
import { GatewayError } from './gateway-error.js';

// A real Connect service whose handler fails in the ways services fail: on purpose with a
// spec code, or by accident.
const unexpected: string[] = [];
function routes(router: ConnectRouter): void {
  router.service(Health, {
    check(request) {
      switch (request.service) {
        case 'inactive':
          throw new GatewayError(
            'IDENTITY_ENVIRONMENT_INACTIVE',
            'Identity environment is inactive.',
            {
              details: { environmentKey: 'STAGING', platforms: ['A', 'B'] },
            },
          );
        case 'bug':
          throw new Error('connection string postgres://user:hunter2@db/x broke');
        case 'redis-down':
          throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
        case 'redis-cluster-shard-down':
          throw new Error(
            'Too many Cluster redirections. Last error: CLUSTERDOWN The cluster is down',
          );
        case 'postgres-down':
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
            code: 'ECONNREFUSED',
          });
        case 'statement-timeout':
          throw Object.assign(new Error('canceling statement due to statement timeout'), {
            code: '57014',
          });
        default:
          return { status: HealthCheckResponse_ServingStatus.SERVING };
      }
    },
  });
}
const interceptors = [
  createErrorInterceptor({ onUnexpected: (_error, procedure) => unexpected.push(procedure) }),
];

describe('errors across Connect', () => {
  let server: Http2Server;
  let baseUrl: string;
  const sessions: ServerHttp2Session[] = [];

  beforeAll(async () => {
    server = createServer(connectNodeAdapter({ routes, interceptors }));
    // Client transports keep HTTP/2 sessions open; end them so the server can close.
    server.on('session', (session) => sessions.push(session));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const transports = () => ({
    'in-process': createRouterTransport(routes, { router: { interceptors } }),
    'connect over HTTP/2': createConnectTransport({ baseUrl, httpVersion: '2' }),
    'gRPC over HTTP/2': createGrpcTransport({ baseUrl }),
  });

  it.each(['in-process', 'connect over HTTP/2', 'gRPC over HTTP/2'] as const)(
    'a GatewayError keeps its spec code, message and details (%s)',
    async (name) => {
      const client = createClient(Health, transports()[name]);
      const failure = await client.check({ service: 'inactive' }).catch((e: unknown) => e);
      const error = fromConnectError(failure);
      expect(error.code).toBe('IDENTITY_ENVIRONMENT_INACTIVE');
      expect(error.status).toBe(409);
      expect(error.message).toBe('Identity environment is inactive.');
      expect(error.details).toEqual({ environmentKey: 'STAGING', platforms: ['A', 'B'] });
    },
  );

  it('an unexpected failure leaves the service as a bare internal error and is reported', async () => {
    unexpected.length = 0;
    const client = createClient(Health, transports()['connect over HTTP/2']);
    const failure = await client.check({ service: 'bug' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ConnectError);
    expect(String((failure as ConnectError).message)).not.toContain('hunter2');
    const error = fromConnectError(failure);
    expect(error.toBody()).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal error.' });
    expect(unexpected).toEqual(['grpc.health.v1.Health/Check']);
  });

  it.each(['redis-down', 'redis-cluster-shard-down', 'postgres-down', 'statement-timeout'])(
    'a service whose PostgreSQL or Redis fails answers SERVICE_UNAVAILABLE, not a 500 (%s)',
    async (service) => {
      const client = createClient(Health, transports()['connect over HTTP/2']);
      const failure = await client.check({ service }).catch((e: unknown) => e);
      expect((failure as ConnectError).code).toBe(Code.Unavailable);
      const error = fromConnectError(failure);
      expect(error.status).toBe(503);
      expect(error.toBody()).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'A gateway dependency is unavailable.',
      });
    },
  );

  it('an unreachable service becomes SERVICE_UNAVAILABLE', async () => {
    const client = createClient(
      Health,
      createConnectTransport({ baseUrl: 'http://127.0.0.1:1', httpVersion: '2' }),
    );
    const error = fromConnectError(await client.check({}).catch((e: unknown) => e));
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.status).toBe(503);
  });

  it('a deadline that passes becomes SERVICE_UNAVAILABLE', () => {
    const error = fromConnectError(new ConnectError('too slow', Code.DeadlineExceeded));
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
  });
});

describe('error table', () => {
  it('maps every code of spec section 7 to its status', () => {
    // Spot checks against the spec's table, one per status class.
    expect(errorStatusByCode.INVALID_REDIRECT).toBe(400);
    expect(errorStatusByCode.NONCE_MISMATCH).toBe(401);
    expect(errorStatusByCode.ACCOUNT_INACTIVE).toBe(403);
    expect(errorStatusByCode.IDENTITY_USER_NOT_FOUND).toBe(404);
    expect(errorStatusByCode.LAST_PLATFORM_ADMIN).toBe(409);
    expect(errorStatusByCode.UNSUPPORTED_MEDIA_TYPE).toBe(415);
    expect(errorStatusByCode.IDENTITY_DISCOVERY_INVALID).toBe(502);
    expect(errorStatusByCode.IDENTITY_SERVICE_NOT_CONFIGURED).toBe(503);
  });

  it('gives a body without details when there are none', () => {
    expect(new GatewayError('NOT_FOUND', 'Unknown platform.').toBody()).toEqual({
      code: 'NOT_FOUND',
      message: 'Unknown platform.',
    });
  });
});
