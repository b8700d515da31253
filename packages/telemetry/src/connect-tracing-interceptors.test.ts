import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import type { ConnectRouter, ServiceImpl, Transport } from '@connectrpc/connect';
import { connectNodeAdapter, createConnectTransport } from '@connectrpc/connect-node';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  createClientTracingInterceptor,
  createServerTracingInterceptor,
} from './connect-tracing-interceptors.js';
import { shutdownTelemetry, startTelemetry } from './start-telemetry.js';
import type { Telemetry } from './start-telemetry.js';
import { EchoService } from './testing/echo-service.js';
import { createMemorySpans, spanNamed } from './testing/memory-spans.js';

const ECHO = 'telemetry.testing.v1.EchoService/Echo';
const memory = createMemorySpans();
let telemetry: Telemetry;

/** What the handler saw: its traceparent header and, inside a child span, a "database" call. */
const seen: { traceparent: string | null }[] = [];

const echoImpl: ServiceImpl<typeof EchoService> = {
  async echo(req, ctx) {
    seen.push({ traceparent: ctx.requestHeader.get('traceparent') });
    await telemetry.tracer.startActiveSpan('db.query', async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      span.end();
    });
    if (req.text === 'missing') throw new ConnectError('no such platform', Code.NotFound);
    if (req.text === 'crash') throw new Error('database connection reset');
    return { text: req.text };
  },
  async *echoMany(req) {
    yield { text: req.text };
    yield { text: req.text };
  },
};

const routes = (router: ConnectRouter): void => {
  router.service(EchoService, echoImpl);
};

function inProcessTransport(): Transport {
  return createRouterTransport(routes, {
    router: { interceptors: [createServerTracingInterceptor()] },
    transport: { interceptors: [createClientTracingInterceptor()] },
  });
}

beforeAll(() => {
  telemetry = startTelemetry({ serviceName: 'rpc-test', spanProcessors: [memory.processor] });
});

afterAll(async () => {
  await shutdownTelemetry();
});

beforeEach(() => {
  memory.exporter.reset();
  seen.length = 0;
});

describe('Connect tracing interceptors (in-process router transport)', () => {
  it('links client span -> server span -> handler work in one trace', async () => {
    const client = createClient(EchoService, inProcessTransport());

    const answer = await telemetry.tracer.startActiveSpan('caller', async (caller) => {
      const response = await client.echo({ text: 'hello' });
      caller.end();
      return response;
    });

    expect(answer.text).toBe('hello');
    const spans = memory.exporter.getFinishedSpans();
    const caller = spanNamed(spans, 'caller');
    const clientSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.CLIENT);
    const serverSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.SERVER);
    const dbSpan = spanNamed(spans, 'db.query');
    expect(clientSpan).toBeDefined();
    expect(serverSpan).toBeDefined();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(clientSpan?.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(dbSpan.parentSpanContext?.spanId).toBe(serverSpan?.spanContext().spanId);
    expect(seen[0]?.traceparent).toBe(
      `00-${caller.spanContext().traceId}-${clientSpan?.spanContext().spanId}-01`,
    );
    expect(clientSpan?.attributes).toMatchObject({
      'rpc.system.name': 'connectrpc',
      'rpc.method': ECHO,
    });
    expect(serverSpan?.attributes).toMatchObject({
      'rpc.system.name': 'connectrpc',
      'rpc.method': ECHO,
    });
    expect(clientSpan?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('starts a new trace when the caller has no active span', async () => {
    await createClient(EchoService, inProcessTransport()).echo({ text: 'hello' });

    const spans = memory.exporter.getFinishedSpans();
    const clientSpan = spans.find((span) => span.kind === SpanKind.CLIENT);
    expect(clientSpan?.parentSpanContext).toBeUndefined();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it('marks both spans failed with the Connect code of the error', async () => {
    const client = createClient(EchoService, inProcessTransport());

    await expect(client.echo({ text: 'missing' })).rejects.toMatchObject({ code: Code.NotFound });

    const rpcSpans = memory.exporter.getFinishedSpans().filter((span) => span.name === ECHO);
    expect(rpcSpans.map((span) => span.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
    for (const span of rpcSpans) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes).toMatchObject({
        'rpc.status_code': 'not_found',
        'error.type': 'not_found',
      });
      expect(span.events.map((event) => event.name)).toContain('exception');
    }
  });

  it('records an unexpected server error as unknown', async () => {
    const client = createClient(EchoService, inProcessTransport());

    const failure = await client.echo({ text: 'crash' }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ConnectError);
    const rpcSpans = memory.exporter.getFinishedSpans().filter((span) => span.name === ECHO);
    const serverSpan = rpcSpans.find((span) => span.kind === SpanKind.SERVER);
    const clientSpan = rpcSpans.find((span) => span.kind === SpanKind.CLIENT);
    expect(serverSpan?.status.code).toBe(SpanStatusCode.ERROR);
    expect(serverSpan?.attributes['rpc.status_code']).toBe('unknown');
    expect(clientSpan?.status.code).toBe(SpanStatusCode.ERROR);
    expect(clientSpan?.attributes['rpc.status_code']).toBe(
      codeToString((failure as ConnectError).code),
    );
  });

  it('passes streaming calls through without spans', async () => {
    const client = createClient(EchoService, inProcessTransport());

    const texts: string[] = [];
    for await (const message of client.echoMany({ text: 'again' })) texts.push(message.text);

    expect(texts).toEqual(['again', 'again']);
    expect(memory.exporter.getFinishedSpans()).toEqual([]);
  });

  it('takes the parent of the server span from the traceparent header', async () => {
    const transport = createRouterTransport(routes, {
      router: { interceptors: [createServerTracingInterceptor()] },
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';

    await createClient(EchoService, transport).echo(
      { text: 'hello' },
      { headers: { traceparent: `00-${traceId}-${parentId}-01` } },
    );

    const serverSpan = spanNamed(memory.exporter.getFinishedSpans(), ECHO);
    expect(serverSpan.kind).toBe(SpanKind.SERVER);
    expect(serverSpan.spanContext().traceId).toBe(traceId);
    expect(serverSpan.parentSpanContext).toMatchObject({ spanId: parentId, isRemote: true });
  });
});

describe('Connect tracing interceptors (HTTP/2 between client and server)', () => {
  let server: http2.Http2Server;
  const sessions = new Set<http2.ServerHttp2Session>();
  let baseUrl: string;

  beforeAll(async () => {
    server = http2.createServer(
      connectNodeAdapter({ routes, interceptors: [createServerTracingInterceptor()] }),
    );
    server.on('session', (session: http2.ServerHttp2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('continues the trace across the network through the traceparent header', async () => {
    const transport = createConnectTransport({
      baseUrl,
      httpVersion: '2',
      interceptors: [createClientTracingInterceptor()],
    });
    const client = createClient(EchoService, transport);

    await telemetry.tracer.startActiveSpan('caller', async (caller) => {
      await client.echo({ text: 'over the wire' });
      caller.end();
    });

    const spans = memory.exporter.getFinishedSpans();
    const clientSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.CLIENT);
    const serverSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.SERVER);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(serverSpan?.parentSpanContext).toMatchObject({
      spanId: clientSpan?.spanContext().spanId,
      isRemote: true,
    });
    expect(spanNamed(spans, 'db.query').parentSpanContext?.spanId).toBe(
      serverSpan?.spanContext().spanId,
    );
    expect(clientSpan?.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(baseUrl).port),
    });
  });
});
