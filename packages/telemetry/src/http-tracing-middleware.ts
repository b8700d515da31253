import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Request, RequestHandler, Response } from 'express';
import { gatewayMetrics } from './gateway-metrics.js';
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
  readonly span: Span;
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
  entry.span.updateName(name);
}

function defaultSpanName(req: Request): string {
  return `${req.method} ${matchedRoute(req) ?? 'unmatched'}`;
}

/**
 * A SERVER span per request, child of the caller's `traceparent` when sent. Records method,
 * path (never the query string), route and status; 5xx marks the span as failed. The rest of
 * the middleware chain runs inside the span's context. The duration also goes to the
 * `gateway.http.server.duration` histogram, with the span's final name as `operation`.
 */
export function createHttpTracingMiddleware(options: HttpTracingOptions = {}): RequestHandler {
  const nameOf = options.spanName ?? defaultSpanName;
  return function traceHttpRequest(req, res, next) {
    const startedAt = performance.now();
    const tracer = options.tracer ?? trace.getTracer(HTTP_TRACER_NAME);
    const callerContext = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: req.method,
          [ATTR_URL_PATH]: requestPathWithoutQuery(req),
        },
      },
      callerContext,
    );
    const entry: HttpServerSpan = { span };
    spansByExchange.set(req, entry);
    spansByExchange.set(res, entry);

    let ended = false;
    const endSpan = (): void => {
      if (ended) return;
      ended = true;
      const route = matchedRoute(req);
      if (route !== undefined) span.setAttribute(ATTR_HTTP_ROUTE, route);
      if (res.headersSent) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
        if (res.statusCode >= 500) {
          span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      const name = entry.name ?? nameOf(req);
      span.updateName(name);
      span.end();
      gatewayMetrics.recordHttpServerDuration(name, res.statusCode, performance.now() - startedAt);
    };
    res.once('finish', endSpan);
    res.once('close', endSpan);

    context.with(trace.setSpan(callerContext, span), next);
  };
}
