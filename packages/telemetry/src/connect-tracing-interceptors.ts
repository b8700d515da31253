import { Code, ConnectError } from '@connectrpc/connect';
import type { Interceptor, StreamRequest, UnaryRequest } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Attributes, Span, TextMapGetter, TextMapSetter, Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_RPC_METHOD,
  ATTR_RPC_STATUS_CODE,
  ATTR_RPC_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import { gatewayMetrics } from './gateway-metrics.js';
import { isTracingRecording } from './start-telemetry.js';

/** Tracer (instrumentation scope) used when the caller does not pass one. */
export const RPC_TRACER_NAME = '@gateway/telemetry/connect';

/** `rpc.system.name` of Connect (semantic conventions enum value). */
const RPC_SYSTEM_CONNECT = 'connectrpc';

export interface RpcTracingOptions {
  /** Tracer for the spans; the global tracer `@gateway/telemetry/connect` unless given. */
  tracer?: Tracer;
}

const headerSetter: TextMapSetter<Headers> = {
  set: (headers, key, value) => headers.set(key, value),
};

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** `registry.v1.RegistryService/CheckReadiness`: the span name and `rpc.method`. */
export function rpcSpanName(req: UnaryRequest | StreamRequest): string {
  return `${req.service.typeName}/${req.method.name}`;
}

function rpcAttributes(req: UnaryRequest): Attributes {
  return { [ATTR_RPC_SYSTEM_NAME]: RPC_SYSTEM_CONNECT, [ATTR_RPC_METHOD]: rpcSpanName(req) };
}

/** Host and port only: a Connect GET carries the request message in the query. */
function serverAttributes(url: string): Attributes {
  if (!URL.canParse(url)) return {};
  const { hostname, port, protocol } = new URL(url);
  const defaultPort = protocol === 'https:' ? 443 : 80;
  return { [ATTR_SERVER_ADDRESS]: hostname, [ATTR_SERVER_PORT]: port ? Number(port) : defaultPort };
}

/** Marks the span failed with the Connect code (`not_found`, `unavailable`, ...). */
function recordRpcError(span: Span, error: unknown): ConnectError {
  const connectError = ConnectError.from(error);
  const code = codeToString(connectError.code);
  span.setAttributes({ [ATTR_RPC_STATUS_CODE]: code, [ATTR_ERROR_TYPE]: code });
  span.recordException(connectError);
  span.setStatus({ code: SpanStatusCode.ERROR, message: connectError.message });
  return connectError;
}

/**
 * A called service that could not answer (unreachable, or past the deadline), as opposed to
 * one that answered an error on purpose (those carry the gateway's error detail).
 */
function isUnanswered(error: ConnectError): boolean {
  const timedOutOrUnreachable =
    error.code === Code.Unavailable || error.code === Code.DeadlineExceeded;
  return timedOutOrUnreachable && error.details.length === 0;
}

async function runInSpan<T>(span: Span, call: () => Promise<T>, client = false): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const connectError = recordRpcError(span, error);
    if (client && isUnanswered(connectError)) gatewayMetrics.recordDependencyError('service');
    throw error;
  } finally {
    span.end();
  }
}

/**
 * For clients (transports): a CLIENT span per unary call, named `<service>/<method>`, with
 * the trace context injected into the request headers (`traceparent`, `baggage`).
 * While no span is recorded only unanswered calls are counted; streaming calls pass through.
 */
export function createClientTracingInterceptor(options: RpcTracingOptions = {}): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    if (!isTracingRecording()) {
      try {
        return await next(req);
      } catch (error) {
        if (isUnanswered(ConnectError.from(error))) gatewayMetrics.recordDependencyError('service');
        throw error;
      }
    }
    const tracer = options.tracer ?? trace.getTracer(RPC_TRACER_NAME);
    const span = tracer.startSpan(rpcSpanName(req), {
      kind: SpanKind.CLIENT,
      attributes: { ...rpcAttributes(req), ...serverAttributes(req.url) },
    });
    const callContext = trace.setSpan(context.active(), span);
    propagation.inject(callContext, req.header, headerSetter);
    return runInSpan(span, () => context.with(callContext, () => next(req)), true);
  };
}

/**
 * For servers (routers): a SERVER span per unary call, child of the caller's span taken from
 * the request headers; the handler runs inside it, so its database calls and nested calls
 * become its children. Streaming calls, and every call while no span is recorded, pass
 * through untouched.
 */
export function createServerTracingInterceptor(options: RpcTracingOptions = {}): Interceptor {
  return (next) => async (req) => {
    if (req.stream || !isTracingRecording()) return next(req);
    const tracer = options.tracer ?? trace.getTracer(RPC_TRACER_NAME);
    const callerContext = propagation.extract(ROOT_CONTEXT, req.header, headerGetter);
    const span = tracer.startSpan(
      rpcSpanName(req),
      { kind: SpanKind.SERVER, attributes: rpcAttributes(req) },
      callerContext,
    );
    const handlerContext = trace.setSpan(callerContext, span);
    return runInSpan(span, () => context.with(handlerContext, () => next(req)));
  };
}
