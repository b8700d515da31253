import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport, type ConnectRouter } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import { createErrorInterceptor, GatewayError } from '@gateway/errors';
import { createLogger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
import { writeErrorAnswer } from './error-handler.js';

// The error line of a request whose service call failed, written by the real logger: the
// Connect error arrives over the Connect protocol (its GatewayErrorDetail as bytes, the
// descriptor attached on the service side), and the line shows codes, not schemas.

const log = createMemoryLog();
const logger = createLogger({ service: 'edge', destination: log.destination });
let server: Server;
let url: string;

beforeAll(async () => {
  const routes = (router: ConnectRouter) =>
    router.service(RegistryService, {
      getCorsOrigins() {
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The registry store is unreachable.', {
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
            code: 'ECONNREFUSED',
          }),
        });
      },
    });
  const registry = createClient(
    RegistryService,
    createRouterTransport(routes, {
      router: { interceptors: [createErrorInterceptor({ onUnexpected: () => undefined })] },
    }),
  );
  server = createServer((req, res) => {
    registry.getCorsOrigins({}).then(
      () => res.end('unexpected'),
      (error: unknown) => writeErrorAnswer(res, error, logger, req.url ?? '/'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/platforms`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('the error line of a failed Connect call', () => {
  it('carries the Connect code, the spec code and the message, and no descriptor', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(503);

    const line = log.lines().find((entry) => entry.msg === 'request failed');
    expect(line).toBeDefined();
    expect(line?.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(line?.err).toEqual(
      expect.objectContaining({
        type: 'ConnectError',
        code: 'Unavailable',
        errorCode: 'SERVICE_UNAVAILABLE',
        message: 'The registry store is unreachable.',
      }),
    );
    const raw = log.raw.join('');
    expect(raw).not.toContain('[redacted]');
    expect(raw).not.toMatch(/"desc"|"typeName"|"metadata"|GatewayErrorDetail|google\.protobuf/);
    expect(raw.length).toBeLessThan(2048);
  });
});
