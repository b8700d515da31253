// The RPC server (split mode): Connect unary calls in the binary format are answered on the
// HTTP/2 stream itself (issue 8); every other request goes to connect-node through node's
// compatibility objects. Real HTTP/2 on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import { createClient, type ConnectRouter } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import {
  GetIdentityEnvironmentRequestSchema,
  GetIdentityEnvironmentResponseSchema,
  RegistryService,
} from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { RpcServer } from './rpc-server.js';
import { startLocalRpcServer } from './testing/local-rpc-server.js';

const PATH = '/registry.v1.RegistryService/GetIdentityEnvironment';

/** The `SLOW` environment: held until the test releases it; `answered` once it returned. */
function slowCall() {
  let entered!: () => void;
  let release!: () => void;
  let answered!: () => void;
  return {
    entered: new Promise<void>((resolve) => (entered = resolve)),
    released: new Promise<void>((resolve) => (release = resolve)),
    answered: new Promise<void>((resolve) => (answered = resolve)),
    enter: () => entered(),
    release: () => release(),
    answer: () => answered(),
  };
}
let slow = slowCall();

const routes = (router: ConnectRouter) => {
  router.service(RegistryService, {
    async getIdentityEnvironment(request, context) {
      context.responseHeader.set('x-served-by', 'test');
      context.responseTrailer.set('x-trailer', 'yes');
      if (request.environmentKey === 'MISSING') {
        throw new GatewayError('NOT_FOUND', 'No such environment.', {
          details: { environmentKey: 'MISSING' },
        });
      }
      if (request.environmentKey === 'SLOW') {
        slow.enter();
        await slow.released;
        // Answered once the server has written (or not) what follows.
        setTimeout(slow.answer, 20);
      }
      return { environment: { environmentKey: request.environmentKey } };
    },
  });
};

let server: RpcServer;
let session: ClientHttp2Session;

beforeAll(async () => {
  server = await startLocalRpcServer(routes, { service: 'rpc-server-test' });
  session = connect(server.url);
});
afterAll(async () => {
  session?.close();
  await server?.close();
});

/** One request on the shared session: the answer's headers and body. */
function exchange(
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ [constants.HTTP2_HEADER_METHOD]: 'POST', ...headers });
    let answer: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (incoming) => (answer = incoming));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => resolve({ headers: answer, body: Buffer.concat(chunks) }));
    stream.end(body);
  });
}

const unaryHeaders = {
  [constants.HTTP2_HEADER_PATH]: PATH,
  'content-type': 'application/proto',
  'connect-protocol-version': '1',
};

describe('Connect unary calls in the binary format', () => {
  it('answer 200 with the message, its headers and trailers (as trailer-*), a length and a date', async () => {
    const request = create(GetIdentityEnvironmentRequestSchema, { environmentKey: 'STAGING' });
    const { headers, body } = await exchange(
      unaryHeaders,
      toBinary(GetIdentityEnvironmentRequestSchema, request),
    );
    expect(headers[constants.HTTP2_HEADER_STATUS]).toBe(200);
    expect(headers['content-type']).toBe('application/proto');
    expect(headers['content-length']).toBe(String(body.byteLength));
    expect(headers['x-served-by']).toBe('test');
    expect(headers['trailer-x-trailer']).toBe('yes');
    expect(typeof headers.date).toBe('string');
    const answer = fromBinary(GetIdentityEnvironmentResponseSchema, body);
    expect(answer.environment?.environmentKey).toBe('STAGING');
  });

  it("answer a service's error with its HTTP status and the Connect JSON error body", async () => {
    const request = create(GetIdentityEnvironmentRequestSchema, { environmentKey: 'MISSING' });
    const { headers, body } = await exchange(
      unaryHeaders,
      toBinary(GetIdentityEnvironmentRequestSchema, request),
    );
    expect(headers[constants.HTTP2_HEADER_STATUS]).toBe(404);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['content-length']).toBe(String(body.byteLength));
    const error = JSON.parse(body.toString('utf8')) as { code: string; details: unknown[] };
    expect(error.code).toBe('not_found');
    expect(error.details).toHaveLength(1);
  });

  it('answer an unreadable message with invalid_argument', async () => {
    const { headers, body } = await exchange(unaryHeaders, Buffer.from([0xff, 0xff, 0xff]));
    expect(headers[constants.HTTP2_HEADER_STATUS]).toBe(400);
    expect((JSON.parse(body.toString('utf8')) as { code: string }).code).toBe('invalid_argument');
  });

  it('leave a call whose caller cancelled it unanswered, and keep serving', async () => {
    slow = slowCall();
    const request = create(GetIdentityEnvironmentRequestSchema, { environmentKey: 'SLOW' });
    const stream = session.request({ [constants.HTTP2_HEADER_METHOD]: 'POST', ...unaryHeaders });
    const closed = new Promise((resolve) => stream.on('close', resolve));
    stream.on('error', () => undefined);
    stream.end(toBinary(GetIdentityEnvironmentRequestSchema, request));
    // Once the implementation holds the call, the caller cancels it (as a deadline does).
    await slow.entered;
    stream.close(constants.NGHTTP2_CANCEL);
    await closed;
    slow.release();
    await slow.answered;
    const again = await exchange(
      unaryHeaders,
      toBinary(
        GetIdentityEnvironmentRequestSchema,
        create(GetIdentityEnvironmentRequestSchema, { environmentKey: 'STAGING' }),
      ),
    );
    expect(again.headers[constants.HTTP2_HEADER_STATUS]).toBe(200);
  });
});

describe('everything else goes to connect-node', () => {
  it('serves the Connect protocol in JSON', async () => {
    const client = createClient(
      RegistryService,
      createConnectTransport({ baseUrl: server.url, httpVersion: '2' }),
    );
    const answer = await client.getIdentityEnvironment({ environmentKey: 'STAGING' });
    expect(answer.environment?.environmentKey).toBe('STAGING');
  });

  it('answers an unknown path with 404', async () => {
    const { headers } = await exchange({ ...unaryHeaders, [constants.HTTP2_HEADER_PATH]: '/nope' });
    expect(headers[constants.HTTP2_HEADER_STATUS]).toBe(404);
  });

  it('answers an Expect other than 100-continue with 417, as node does', async () => {
    const { headers } = await exchange({
      [constants.HTTP2_HEADER_PATH]: PATH,
      'content-type': 'application/json',
      expect: 'something-else',
    });
    expect(headers[constants.HTTP2_HEADER_STATUS]).toBe(417);
  });
});
