import { context, isSpanContextValid, trace } from '@opentelemetry/api';

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
  trace_flags?: string;
}

/** The ids of the span active in the current async context, as log fields. */
export function activeTraceFields(): TraceFields {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: spanContext.traceFlags.toString(16).padStart(2, '0'),
  };
}
