import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Request, RequestHandler, Response } from 'express';
import { gatewayMetrics } from './gateway-metrics.js';
import { isTracingRecording } from './start-telemetry.js';
import { matchedRoute, requestPathWithoutQuery } from './request-path.js';

/** Tracer (instrumentation scope) used when the caller does not pass one. */
export const HTTP_TRACER_NAME = '@gateway/telemetry/http';

export interface HttpTracingOptions {
  /**
   * Names the span once the response is finished (the route is known by then). Default:
   * `${method} ${route}`, or `${method} unmatched` when no route matched.
   */
  spanName?: (req: Request) => string;
  /** Tracer for the spans; the global tracer `@gateway/telemetry/http` unless given. */
  tracer?: Tracer;
}

interface HttpServerSpan {
  /** Undefined while no span is recorded. */
  readonly span: Span | undefined;
  /** Set by `setHttpSpanName`; wins over `spanName` and the default. */
  name?: string;
}

const spansByExchange = new WeakMap<Request | Response, HttpServerSpan>();

/**
 * Renames the HTTP server span of a request, e.g. to the operationId of the spec
 * (`startAuthentication`). Accepts the request or the response. Without the tracing
 * middleware in front it does nothing.
 */
export function setHttpSpanName(exchange: Request | Response, name: string): void {
  const entry = spansByExchange.get(exchange);
  if (!entry) return;
  entry.name = name;
  entry.span?.updateName(name);
}

function defaultSpanName(req: Request): string {
  return `${req.method} ${matchedRoute(req) ?? 'unmatched'}`;
}

/**
 * A SERVER span for one request/response pair of node:http, child of the caller's
 * `traceparent` when sent, ended when the response finishes or the connection closes:
 * method, path (never the query string), route and status; 5xx marks the span as failed. The
 * duration also goes to the `gateway.http.server.duration` histogram under the span's final
 * name (`nameOf()` at the end). `within` runs the request's work in the span's context.
 */
export function traceHttpServerExchange(
  req: IncomingMessage,
  res: ServerResponse,
  options: {
    path: string;
    tracer?: Tracer | undefined;
    /** The span's final name (and the duration's `operation`), asked once the response is finished. */
    nameOf: () => string;
    /** The matched route, asked at the end. */
    routeOf?: () => string | undefined;
  },
): { span: Span | undefined; within(work: () => void): void } {
  const startedAt = performance.now();
  const recording = isTracingRecording();
  const method = req.method ?? 'GET';
  const callerContext = recording ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
  const span = recording
    ? (options.tracer ?? trace.getTracer(HTTP_TRACER_NAME)).startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: options.path },
        },
        callerContext,
      )
    : undefined;
  let ended = false;
  const endSpan = (): void => {
    if (ended) return;
    ended = true;
    const name = options.nameOf();
    gatewayMetrics.recordHttpServerDuration(name, res.statusCode, performance.now() - startedAt);
    if (span === undefined) return;
    const route = options.routeOf?.();
    if (route !== undefined) span.setAttribute(ATTR_HTTP_ROUTE, route);
    if (res.headersSent) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.updateName(name);
    span.end();
  };
  res.once('finish', endSpan);
  res.once('close', endSpan);
  if (span === undefined) return { span, within: (work) => work() };
  const spanContext = trace.setSpan(callerContext, span);
  return { span, within: (work) => context.with(spanContext, work) };
}

/**
 * Express middleware of `traceHttpServerExchange`: the span is named by `setHttpSpanName`,
 * else `spanName`, else `${method} ${route}`; the rest of the middleware chain runs inside
 * the span's context.
 */
export function createHttpTracingMiddleware(options: HttpTracingOptions = {}): RequestHandler {
  const nameOf = options.spanName ?? defaultSpanName;
  return function traceHttpRequest(req, res, next) {
    const exchange = traceHttpServerExchange(req, res, {
      path: requestPathWithoutQuery(req),
      tracer: options.tracer,
      nameOf: () => spansByExchange.get(res)?.name ?? nameOf(req),
      routeOf: () => matchedRoute(req),
    });
    const entry: HttpServerSpan = { span: exchange.span };
    spansByExchange.set(req, entry);
    spansByExchange.set(res, entry);
    exchange.within(next);
  };
}
