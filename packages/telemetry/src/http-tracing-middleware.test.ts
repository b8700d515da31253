import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler, Response } from 'express';
import {
  createClientTracingInterceptor,
  createServerTracingInterceptor,
} from './connect-tracing-interceptors.js';
import { createHttpTracingMiddleware, setHttpSpanName } from './http-tracing-middleware.js';
import { createLogger } from './logger.js';
import { createRequestIdMiddleware } from './request-id-middleware.js';
import { createRequestLoggingMiddleware } from './request-logging-middleware.js';
import { shutdownTelemetry, startTelemetry } from './start-telemetry.js';
import type { Telemetry } from './start-telemetry.js';
import { EchoService } from './testing/echo-service.js';
import { createMemoryLog } from './testing/memory-log.js';
import {
  allAttributeText,
  createMemorySpans,
  spanNamed,
  waitForSpans,
} from './testing/memory-spans.js';
import { startMiddlewareServer } from './testing/middleware-server.js';
import type { MiddlewareServer, TestRoute } from './testing/middleware-server.js';

/** The test server is plain node:http, so handlers answer with node's API, not Express's. */
function send(res: Response, status: number, body?: unknown): void {
  res.statusCode = status;
  if (body === undefined) {
    res.end();
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

const ECHO = 'telemetry.testing.v1.EchoService/Echo';
const SECRET_QUERY = 'code=SECRET-HANDOFF-CODE&state=SECRET-STATE-VALUE';
const memory = createMemorySpans();
let telemetry: Telemetry;

beforeAll(() => {
  telemetry = startTelemetry({ serviceName: 'edge', spanProcessors: [memory.processor] });
});

afterAll(async () => {
  await shutdownTelemetry();
});

beforeEach(() => {
  memory.exporter.reset();
});

/** The registry as the edge sees it: a Connect service behind the in-process transport. */
const registry = createClient(
  EchoService,
  createRouterTransport(
    ({ service }) =>
      service(EchoService, {
        async echo(req) {
          await telemetry.tracer.startActiveSpan('db.query', async (span) => span.end());
          if (req.text === 'missing') throw new ConnectError('unknown platform', Code.NotFound);
          return { text: req.text };
        },
      }),
    {
      router: { interceptors: [createServerTracingInterceptor()] },
      transport: { interceptors: [createClientTracingInterceptor()] },
    },
  ),
);

describe('a request through the HTTP middleware that calls a Connect service', () => {
  const log = createMemoryLog();
  const logger = createLogger({ service: 'edge', destination: log.destination });
  let server: MiddlewareServer;

  const routes: TestRoute[] = [
    {
      method: 'GET',
      path: '/v1/platforms/:platformKey',
      async handler(req, res) {
        logger.info('looking up platform');
        setHttpSpanName(res, 'getPlatform');
        try {
          const platform = await registry.echo({
            text: req.url.includes('missing') ? 'missing' : 'shop',
          });
          send(res, 200, { platformKey: platform.text });
        } catch {
          send(res, 502, { code: 'UPSTREAM_FAILED' });
        }
      },
    },
  ];

  beforeAll(async () => {
    server = await startMiddlewareServer(
      [
        createRequestIdMiddleware(),
        createHttpTracingMiddleware(),
        createRequestLoggingMiddleware(logger),
      ],
      routes,
    );
  });

  afterAll(async () => {
    await server.close();
  });

  afterEach(() => {
    log.raw.length = 0;
  });

  it('yields one trace: http server span -> rpc client span -> rpc server span -> db span', async () => {
    const response = await fetch(`${server.url}/v1/platforms/shop?${SECRET_QUERY}`);
    expect(response.status).toBe(200);

    const spans = await waitForSpans(memory.exporter, 4);
    const httpSpan = spanNamed(spans, 'getPlatform');
    const clientSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.CLIENT);
    const serverSpan = spans.find((span) => span.name === ECHO && span.kind === SpanKind.SERVER);
    const dbSpan = spanNamed(spans, 'db.query');

    expect(spans).toHaveLength(4);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(httpSpan.kind).toBe(SpanKind.SERVER);
    expect(httpSpan.parentSpanContext).toBeUndefined();
    expect(clientSpan?.parentSpanContext?.spanId).toBe(httpSpan.spanContext().spanId);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(dbSpan.parentSpanContext?.spanId).toBe(serverSpan?.spanContext().spanId);
    expect(httpSpan.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/v1/platforms/shop',
      'http.route': '/v1/platforms/:platformKey',
      'http.response.status_code': 200,
    });
    expect(httpSpan.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('never puts the query string into a span', async () => {
    await fetch(`${server.url}/v1/platforms/shop?${SECRET_QUERY}`);
    await fetch(`${server.url}/nowhere?${SECRET_QUERY}`);

    const spans = await waitForSpans(memory.exporter, 5);
    const text = allAttributeText(spans);
    expect(text).not.toContain('SECRET');
    expect(text).not.toContain('?');
  });

  it('logs inside the request with the trace ids of the http span', async () => {
    await fetch(`${server.url}/v1/platforms/shop?${SECRET_QUERY}`);

    const httpSpan = spanNamed(await waitForSpans(memory.exporter, 4), 'getPlatform');
    const handlerLine = log.lines().find((line) => line.msg === 'looking up platform');
    expect(handlerLine).toMatchObject({
      service: 'edge',
      trace_id: httpSpan.spanContext().traceId,
      span_id: httpSpan.spanContext().spanId,
    });
  });

  it('writes one request line with method, path, status, duration and request id', async () => {
    const response = await fetch(`${server.url}/v1/platforms/shop?${SECRET_QUERY}`, {
      headers: { authorization: 'Basic c2hvcDpzM2NyZXQ=', cookie: 'svc_auth_session=abc' },
    });

    const httpSpan = spanNamed(await waitForSpans(memory.exporter, 4), 'getPlatform');
    const requestLines = log.lines().filter((line) => line.msg === 'request completed');
    expect(requestLines).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'GET',
        path: '/v1/platforms/shop',
        status: 200,
        durationMs: expect.any(Number),
        requestId: response.headers.get('x-request-id'),
        trace_id: httpSpan.spanContext().traceId,
      }),
    ]);
    const raw = log.raw.join('');
    expect(raw).not.toContain('SECRET');
    expect(raw).not.toContain('c2hvcDpzM2NyZXQ');
    expect(raw).not.toContain('svc_auth_session');
    expect(requestLines[0]).not.toHaveProperty('headers');
    expect(requestLines[0]).not.toHaveProperty('query');
  });

  it('continues the trace of a caller that sends traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';

    await fetch(`${server.url}/v1/platforms/shop`, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });

    const spans = await waitForSpans(memory.exporter, 4);
    expect(spans.every((span) => span.spanContext().traceId === traceId)).toBe(true);
    expect(spanNamed(spans, 'getPlatform').parentSpanContext).toMatchObject({
      spanId: parentId,
      isRemote: true,
    });
  });

  it('marks the rpc spans failed when the service call fails, and the http span on 5xx', async () => {
    const response = await fetch(`${server.url}/v1/platforms/missing`);
    expect(response.status).toBe(502);

    const spans = await waitForSpans(memory.exporter, 4);
    const rpcSpans = spans.filter((span) => span.name === ECHO);
    expect(rpcSpans).toHaveLength(2);
    for (const span of rpcSpans) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['rpc.status_code']).toBe('not_found');
    }
    const httpSpan = spanNamed(spans, 'getPlatform');
    expect(httpSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(httpSpan.attributes).toMatchObject({
      'http.response.status_code': 502,
      'error.type': '502',
    });
    expect(log.lines().find((line) => line.msg === 'request completed')).toMatchObject({
      level: 'error',
      status: 502,
    });
  });
});

describe('createHttpTracingMiddleware span names and status', () => {
  let server: MiddlewareServer | undefined;

  async function serve(middleware: RequestHandler[], routes: TestRoute[]): Promise<string> {
    server = await startMiddlewareServer(middleware, routes);
    return server.url;
  }

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const replyWith =
    (status: number): TestRoute['handler'] =>
    (_req, res) => {
      send(res, status);
    };

  it('names the span `${method} ${route}` by default', async () => {
    const url = await serve(
      [createHttpTracingMiddleware()],
      [{ method: 'POST', path: '/v1/platforms/:platformKey/archive', handler: replyWith(204) }],
    );

    await fetch(`${url}/v1/platforms/shop/archive`, { method: 'POST' });

    const [span] = await waitForSpans(memory.exporter, 1);
    expect(span?.name).toBe('POST /v1/platforms/:platformKey/archive');
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('names the span `${method} unmatched` when no route matched', async () => {
    const url = await serve([createHttpTracingMiddleware()], []);

    const response = await fetch(`${url}/v1/unknown/path?${SECRET_QUERY}`);

    expect(response.status).toBe(404);
    const [span] = await waitForSpans(memory.exporter, 1);
    expect(span?.name).toBe('GET unmatched');
    expect(span?.attributes).not.toHaveProperty('http.route');
    expect(span?.attributes['url.path']).toBe('/v1/unknown/path');
  });

  it('uses the spanName option, called once the route is known', async () => {
    const url = await serve(
      [
        createHttpTracingMiddleware({
          spanName: (req) => `custom ${req.method} ${String(req.route?.path)}`,
        }),
      ],
      [{ method: 'GET', path: '/health', handler: replyWith(200) }],
    );

    await fetch(`${url}/health`);

    const [span] = await waitForSpans(memory.exporter, 1);
    expect(span?.name).toBe('custom GET /health');
  });

  it('lets setHttpSpanName on the request rename the span', async () => {
    const url = await serve(
      [createHttpTracingMiddleware()],
      [
        {
          method: 'GET',
          path: '/v1/auth/start',
          handler(req, res) {
            setHttpSpanName(req, 'startAuthentication');
            res.setHeader('location', 'https://identity.example/authorize');
            send(res, 302);
          },
        },
      ],
    );

    await fetch(`${url}/v1/auth/start?returnTo=%2Fapp`, { redirect: 'manual' });

    const [span] = await waitForSpans(memory.exporter, 1);
    expect(span?.name).toBe('startAuthentication');
    expect(span?.attributes['http.response.status_code']).toBe(302);
  });

  it('keeps 4xx as not failed and marks 5xx failed', async () => {
    const url = await serve(
      [createHttpTracingMiddleware()],
      [
        { method: 'GET', path: '/forbidden', handler: replyWith(403) },
        { method: 'GET', path: '/unavailable', handler: replyWith(503) },
      ],
    );

    await fetch(`${url}/forbidden`);
    await fetch(`${url}/unavailable`);

    const spans = await waitForSpans(memory.exporter, 2);
    expect(spanNamed(spans, 'GET /forbidden').status.code).toBe(SpanStatusCode.UNSET);
    expect(spanNamed(spans, 'GET /unavailable').status.code).toBe(SpanStatusCode.ERROR);
  });

  it('runs the rest of the chain inside the span, across awaits', async () => {
    let activeSpanId: string | undefined;
    const url = await serve(
      [createHttpTracingMiddleware()],
      [
        {
          method: 'GET',
          path: '/slow',
          async handler(_req, res) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            activeSpanId = trace.getActiveSpan()?.spanContext().spanId;
            send(res, 200);
          },
        },
      ],
    );

    await fetch(`${url}/slow`);

    const [span] = await waitForSpans(memory.exporter, 1);
    expect(activeSpanId).toBe(span?.spanContext().spanId);
  });

  it('ends the span and logs an aborted request when the client goes away first', async () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'edge', destination: log.destination });
    let handlerStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (handlerStarted = resolve));
    const url = await serve(
      [
        createRequestIdMiddleware(),
        createHttpTracingMiddleware(),
        createRequestLoggingMiddleware(logger),
      ],
      [
        {
          method: 'GET',
          path: '/never-answers',
          handler() {
            handlerStarted();
          },
        },
      ],
    );
    const abort = new AbortController();

    const request = fetch(`${url}/never-answers`, { signal: abort.signal }).catch(() => undefined);
    await started;
    abort.abort();
    await request;

    const [span] = await waitForSpans(memory.exporter, 1);
    expect(span?.name).toBe('GET /never-answers');
    expect(span?.attributes).not.toHaveProperty('http.response.status_code');
    expect(log.lines()).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'request aborted', path: '/never-answers' }),
    ]);
  });
});
