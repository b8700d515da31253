// The service server (split mode): connect-node on cleartext HTTP/2, called by stock Connect,
// gRPC and gRPC-Web clients on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Code, createClient, type ConnectError, type ConnectRouter } from '@connectrpc/connect';
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from '@connectrpc/connect-node';
import { Health, RegistryService } from '@gateway/contracts';
import { GatewayError, fromConnectError } from '@gateway/errors';
import type { ServiceServer } from './service-server.js';
import { startLocalServiceServer } from './testing/local-service-server.js';

/** The `SLOW` environment: held until the test releases it. */
function slowCall() {
  let enter!: () => void;
  let release!: () => void;
  return {
    entered: new Promise<void>((resolve) => (enter = resolve)),
    released: new Promise<void>((resolve) => (release = resolve)),
    enter: () => enter(),
    release: () => release(),
  };
}
let slow = slowCall();

const routes = (router: ConnectRouter) => {
  router.service(RegistryService, {
    async getIdentityEnvironment(request, context) {
      context.responseHeader.set('x-served-by', 'test');
      if (request.environmentKey === 'MISSING') {
        throw new GatewayError('NOT_FOUND', 'No such environment.', {
          details: { environmentKey: 'MISSING' },
        });
      }
      if (request.environmentKey === 'SLOW') {
        slow.enter();
        await slow.released;
      }
      return { environment: { environmentKey: request.environmentKey } };
    },
  });
};

let server: ServiceServer;

beforeAll(async () => {
  server = await startLocalServiceServer(routes, { service: 'service-server-test' });
});
afterAll(async () => {
  slow.release();
  await server?.close();
});

const protocols = {
  'Connect (binary)': () => createConnectTransport({ baseUrl: server.url, httpVersion: '2' }),
  'Connect (JSON)': () =>
    createConnectTransport({ baseUrl: server.url, httpVersion: '2', useBinaryFormat: false }),
  gRPC: () => createGrpcTransport({ baseUrl: server.url }),
  'gRPC-Web': () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: '2' }),
};

describe.each(Object.entries(protocols))('%s', (_protocol, transport) => {
  it('answers with the message and its response headers', async () => {
    let header: Headers | undefined;
    const answer = await createClient(RegistryService, transport()).getIdentityEnvironment(
      { environmentKey: 'STAGING' },
      { onHeader: (received) => (header = received) },
    );
    expect(answer.environment?.environmentKey).toBe('STAGING');
    expect(header?.get('x-served-by')).toBe('test');
  });

  it("answers a service's error with its code, message and details", async () => {
    const failure = await createClient(RegistryService, transport())
      .getIdentityEnvironment({ environmentKey: 'MISSING' })
      .catch((error: unknown) => error);
    expect((failure as ConnectError).code).toBe(Code.NotFound);
    expect(fromConnectError(failure).toBody()).toEqual({
      code: 'NOT_FOUND',
      message: 'No such environment.',
      details: { environmentKey: 'MISSING' },
    });
  });

  it('answers Unimplemented for a service it does not serve', async () => {
    const failure = await createClient(Health, transport())
      .check({})
      .catch((error: unknown) => error);
    expect((failure as ConnectError).code).toBe(Code.Unimplemented);
  });
});

describe('close', () => {
  it('lets a call in flight answer, then resolves', async () => {
    const draining = await startLocalServiceServer(routes, { service: 'service-server-test' });
    slow = slowCall();
    const client = createClient(
      RegistryService,
      createConnectTransport({ baseUrl: draining.url, httpVersion: '2' }),
    );
    const call = client.getIdentityEnvironment({ environmentKey: 'SLOW' });
    await slow.entered;
    const closed = draining.close();
    slow.release();
    expect((await call).environment?.environmentKey).toBe('SLOW');
    await closed;
  });
});
