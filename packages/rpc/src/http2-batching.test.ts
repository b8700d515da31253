// Batching in the HTTP/2 transport (issue 8): the calls of one turn of the event loop that
// carry no headers go to the service on one stream (`BatchService.CallMany`), and each is
// served and answered as if it had a stream of its own. Real HTTP/2 on 127.0.0.1, through the
// testkit's TCP proxy, counting the streams the client opens.
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { create, fromBinary, toBinary, type DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import {
  BatchService,
  GatewayErrorDetailSchema,
  GetPlatformRequestSchema,
  GetPlatformResponseSchema,
  RegistryService,
} from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { startTcpProxy } from '@gateway/testkit';
import { createHttp2ConnectTransport } from './http2-connect-transport.js';
import { startLocalRpcServer } from './testing/local-rpc-server.js';
import { methodPath } from './unary-chain.js';
import type { RpcServer } from './rpc-server.js';

/** What the implementation received, in order. */
const received: string[] = [];
let release: () => void = () => undefined;
let held: Promise<void> = Promise.resolve();

const routes = (router: ConnectRouter) => {
  router.service(RegistryService, {
    async getIdentityEnvironment(request) {
      received.push(request.environmentKey);
      if (request.environmentKey === 'MISSING') {
        throw new GatewayError('NOT_FOUND', 'No such environment.', { details: { key: 'M' } });
      }
      if (request.environmentKey === 'SLOW') await held;
      return { environment: { environmentKey: request.environmentKey, displayName: 'd' } };
    },
    getPlatform(request) {
      received.push(`platform:${request.platformKey}`);
      return { platform: { platformKey: request.platformKey } };
    },
  });
};

/**
 * A proxy to `port` that counts the HTTP/2 streams clients open: the HEADERS frames (type 1)
 * they send after the connection preface.
 */
async function startStreamCounter(port: number) {
  const counter = { streams: 0 };
  const proxy = await startTcpProxy(
    { host: '127.0.0.1', port },
    {
      onConnection: (client) => {
        let pending = Buffer.alloc(0);
        let prefaceLeft = 24;
        client.on('data', (chunk: Buffer) => {
          pending = Buffer.concat([pending, chunk]);
          const skipped = Math.min(prefaceLeft, pending.length);
          pending = pending.subarray(skipped);
          prefaceLeft -= skipped;
          while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
            if (pending[3] === 1) counter.streams += 1;
            pending = pending.subarray(9 + pending.readUIntBE(0, 3));
          }
        });
      },
    },
  );
  return { url: `http://127.0.0.1:${proxy.port}`, counter, proxy };
}

/** The transport under test, without interceptors; nothing batched or coalesced unless asked. */
function transportTo(
  baseUrl: string,
  options: { timeoutMs?: number; batch?: DescMethod[]; coalesce?: DescMethod[] } = {},
) {
  return createHttp2ConnectTransport({
    baseUrl,
    interceptors: [],
    defaultTimeoutMs: options.timeoutMs ?? 5_000,
    pingIntervalMs: 60_000,
    pingTimeoutMs: 5_000,
    ...(options.batch === undefined ? {} : { batch: options.batch }),
    ...(options.coalesce === undefined ? {} : { coalesce: options.coalesce }),
  });
}

function batchingClient(
  baseUrl: string,
  timeoutMs = 5_000,
  batch: DescMethod[] = [
    RegistryService.method.getIdentityEnvironment,
    RegistryService.method.getPlatform,
  ],
) {
  return createClient(RegistryService, transportTo(baseUrl, { timeoutMs, batch }));
}

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => ConnectError.from(error),
  );

let server: RpcServer;
let relay: Awaited<ReturnType<typeof startStreamCounter>>;

beforeAll(async () => {
  server = await startLocalRpcServer(routes, { service: 'batching-test' });
  relay = await startStreamCounter(server.port);
});
afterAll(async () => {
  release();
  await relay?.proxy.close();
  await server?.close();
});
beforeEach(() => {
  received.length = 0;
  relay.counter.streams = 0;
});

describe('batching the calls of one turn', () => {
  it('sends them on one stream and answers each call with its own message', async () => {
    const client = batchingClient(relay.url);
    const [a, b, platform, c] = await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'A' }),
      client.getIdentityEnvironment({ environmentKey: 'B' }),
      client.getPlatform({ platformKey: 'P' }),
      client.getIdentityEnvironment({ environmentKey: 'A' }),
    ]);
    expect([a, b, c].map((answer) => answer.environment?.environmentKey)).toEqual(['A', 'B', 'A']);
    expect(platform.platform?.platformKey).toBe('P');
    // Every call was served, identical ones too (batching is not coalescing).
    expect([...received].sort()).toEqual(['A', 'A', 'B', 'platform:P']);
    expect(relay.counter.streams).toBe(1);
  });

  it('gives a failing call its own error, details included, and the others their answers', async () => {
    const client = batchingClient(relay.url);
    const [missing, found] = await Promise.all([
      failureOf(client.getIdentityEnvironment({ environmentKey: 'MISSING' })),
      client.getIdentityEnvironment({ environmentKey: 'A' }),
    ]);
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).toBe('No such environment.');
    const [detail] = missing.findDetails(GatewayErrorDetailSchema);
    expect(detail?.code).toBe('NOT_FOUND');
    expect(detail?.details).toEqual({ key: 'M' });
    expect(found.environment?.environmentKey).toBe('A');
    expect(relay.counter.streams).toBe(1);
  });

  it('fails each caller at its deadline while the batch is held', async () => {
    const client = batchingClient(relay.url, 150);
    held = new Promise((resolve) => (release = resolve));
    const started = Date.now();
    const failures = await Promise.all([
      failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' })),
      failureOf(client.getIdentityEnvironment({ environmentKey: 'A' })),
    ]);
    release();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    // The batch is answered when its slowest call is: the quick call waited for it too.
    expect(failures.map((failure) => failure.code)).toEqual([
      Code.DeadlineExceeded,
      Code.DeadlineExceeded,
    ]);
    expect(received).toEqual(['SLOW', 'A']);
    expect(relay.counter.streams).toBe(1);
  });

  it('puts a coalesced call of a listed method in the batch, once for identical calls', async () => {
    const both = [RegistryService.method.getIdentityEnvironment];
    const client = createClient(
      RegistryService,
      transportTo(relay.url, { coalesce: both, batch: both }),
    );
    const answers = await Promise.all(
      ['A', 'A', 'B'].map((environmentKey) => client.getIdentityEnvironment({ environmentKey })),
    );
    expect(answers.map((answer) => answer.environment?.environmentKey)).toEqual(['A', 'A', 'B']);
    expect(received).toEqual(['A', 'B']);
    expect(relay.counter.streams).toBe(1);
  });

  it('sends more calls of one turn than a batch carries in several batches', async () => {
    const client = batchingClient(relay.url);
    const keys = Array.from({ length: 130 }, (_, index) => `K${index}`);
    const answers = await Promise.all(
      keys.map((environmentKey) => client.getIdentityEnvironment({ environmentKey })),
    );
    expect(answers.map((answer) => answer.environment?.environmentKey)).toEqual(keys);
    expect(relay.counter.streams).toBe(2);
  });

  it('fails every call of a batch UNAVAILABLE when the connection drops', async () => {
    const client = batchingClient(relay.url);
    held = new Promise((resolve) => (release = resolve));
    const failures = Promise.all([
      failureOf(client.getIdentityEnvironment({ environmentKey: 'SLOW' })),
      failureOf(client.getIdentityEnvironment({ environmentKey: 'A' })),
    ]);
    while (received.length < 2) await new Promise((resolve) => setImmediate(resolve));
    await relay.proxy.cut();
    await relay.proxy.restore();
    expect((await failures).map((failure) => failure.code)).toEqual([
      Code.Unavailable,
      Code.Unavailable,
    ]);
    release();
    // The next calls open a new connection.
    const again = await client.getIdentityEnvironment({ environmentKey: 'B' });
    expect(again.environment?.environmentKey).toBe('B');
  });

  it('sends a lone call, calls with headers, of another deadline or of a method not listed on streams of their own', async () => {
    const client = batchingClient(relay.url);
    await client.getIdentityEnvironment({ environmentKey: 'A' });
    expect(relay.counter.streams).toBe(1);
    await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'A' }, { headers: { traceparent: 'x' } }),
      client.getIdentityEnvironment({ environmentKey: 'B' }, { headers: { traceparent: 'y' } }),
      client.getIdentityEnvironment({ environmentKey: 'C' }, { timeoutMs: 1_000 }),
      client.getIdentityEnvironment({ environmentKey: 'D' }),
    ]);
    expect(relay.counter.streams).toBe(5);
    expect([...received].sort()).toEqual(['A', 'A', 'B', 'C', 'D']);
    // Methods not listed go on streams of their own.
    const listingOne = batchingClient(relay.url, 5_000, [
      RegistryService.method.getIdentityEnvironment,
    ]);
    await Promise.all([
      listingOne.getPlatform({ platformKey: 'P' }),
      listingOne.getPlatform({ platformKey: 'Q' }),
    ]);
    expect(relay.counter.streams).toBe(7);
  });
});

describe('a peer without batches', () => {
  let plain: Http2Server;
  let plainRelay: Awaited<ReturnType<typeof startStreamCounter>>;
  beforeAll(async () => {
    // connect-node's own server, which knows no BatchService.
    plain = createHttp2Server(connectNodeAdapter({ routes }));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    plainRelay = await startStreamCounter((plain.address() as AddressInfo).port);
  });
  afterAll(async () => {
    await plainRelay?.proxy.close();
    await new Promise((resolve) => plain.close(resolve));
  });

  it('gets each call again on a stream of its own, and every later call too', async () => {
    const client = batchingClient(plainRelay.url);
    const first = await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'A' }),
      client.getIdentityEnvironment({ environmentKey: 'B' }),
    ]);
    expect(first.map((answer) => answer.environment?.environmentKey)).toEqual(['A', 'B']);
    // The batch (refused UNIMPLEMENTED, nothing served), then one stream per call.
    expect(plainRelay.counter.streams).toBe(3);
    expect(received).toEqual(['A', 'B']);
    await Promise.all([
      client.getIdentityEnvironment({ environmentKey: 'C' }),
      client.getIdentityEnvironment({ environmentKey: 'D' }),
    ]);
    expect(plainRelay.counter.streams).toBe(5);
  });
});

describe('the RPC server serving a batch', () => {
  it('fails a call of a method it does not serve alone', async () => {
    const platformPath = methodPath(RegistryService.method.getPlatform);
    const answer = await createClient(BatchService, transportTo(server.url)).callMany({
      calls: [
        { path: '/nowhere.v1.Service/Method', message: new Uint8Array() },
        {
          path: platformPath,
          message: toBinary(
            GetPlatformRequestSchema,
            create(GetPlatformRequestSchema, { platformKey: 'P' }),
          ),
        },
      ],
    });
    const [unknown, platform] = answer.answers;
    expect(unknown?.result.case).toBe('error');
    expect(JSON.parse(Buffer.from(unknown?.result.value as Uint8Array).toString())).toMatchObject({
      code: 'unimplemented',
    });
    expect(platform?.result.case).toBe('message');
    expect(
      fromBinary(GetPlatformResponseSchema, platform?.result.value as Uint8Array).platform
        ?.platformKey,
    ).toBe('P');
    expect(received).toEqual(['platform:P']);
  });
});
