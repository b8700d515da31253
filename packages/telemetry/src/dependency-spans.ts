import { INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { gatewayMetrics, type DependencyName } from './gateway-metrics.js';
import { isTracingRecording } from './start-telemetry.js';

/** Tracer (instrumentation scope) of the PostgreSQL, Redis and identity provider spans. */
export const DEPENDENCY_TRACER_NAME = '@gateway/telemetry/dependencies';

/** The span of every dependency call while no span is recorded: does nothing. */
const NOT_RECORDED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * A CLIENT span for one call to a dependency (`pg.query`, `redis.get`, `oidc.token`), child
 * of the active span. Callers pass only safe attributes: never SQL parameters, keys' values,
 * tokens or codes.
 */
export function startDependencySpan(name: string, attributes: Attributes): Span {
  if (!isTracingRecording()) return NOT_RECORDED;
  return trace
    .getTracer(DEPENDENCY_TRACER_NAME)
    .startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active());
}

/** The error's code (`ECONNREFUSED`, `23505`) or else its name; never its message. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && code !== '') return code;
    if (typeof name === 'string' && name !== '') return name;
  }
  return 'error';
}

/**
 * Ends a dependency span as failed. Only the error's type is recorded, never its message or
 * stack (a database message may quote a value). With `dependency` the failure also counts in
 * `gateway.dependency.errors`: pass it only when the dependency itself failed (unreachable,
 * timed out), not for an answer such as a unique violation.
 */
export function failDependencySpan(span: Span, error: unknown, dependency?: DependencyName): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
  if (dependency !== undefined) gatewayMetrics.recordDependencyError(dependency);
}

/**
 * Runs `call` inside a dependency span; a rejection fails the span and, when `failedDependency`
 * names a dependency for it, is counted as that dependency's error.
 */
export async function traceDependencyCall<T>(
  name: string,
  attributes: Attributes,
  call: (span: Span) => Promise<T>,
  failedDependency?: (error: unknown) => DependencyName | undefined,
): Promise<T> {
  const span = startDependencySpan(name, attributes);
  let result: T;
  try {
    result = await (span === NOT_RECORDED
      ? call(span)
      : context.with(trace.setSpan(context.active(), span), () => call(span)));
  } catch (error) {
    failDependencySpan(span, error, failedDependency?.(error));
    throw error;
  }
  span.end();
  return result;
}
