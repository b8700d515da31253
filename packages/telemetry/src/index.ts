export { startTelemetry, getTracer, flushTelemetry, shutdownTelemetry } from './start-telemetry.js';
export type { Telemetry, TelemetryOptions } from './start-telemetry.js';
export { gatewayMetrics, GATEWAY_METER_NAME } from './gateway-metrics.js';
export type { DependencyName } from './gateway-metrics.js';
export {
  DEPENDENCY_TRACER_NAME,
  failDependencySpan,
  startDependencySpan,
  traceDependencyCall,
} from './dependency-spans.js';
export {
  chooseLogFormat,
  createLogger,
  createPrettyDestination,
  REDACTED,
  REDACTED_PATHS,
} from './logger.js';
export type { Logger, LoggerCreateOptions, LogFormat } from './logger.js';
export { activeTraceFields } from './active-trace-fields.js';
export type { TraceFields } from './active-trace-fields.js';
export {
  createClientTracingInterceptor,
  createServerTracingInterceptor,
  rpcSpanName,
  RPC_TRACER_NAME,
} from './connect-tracing-interceptors.js';
export type { RpcTracingOptions } from './connect-tracing-interceptors.js';
export {
  createHttpTracingMiddleware,
  setHttpSpanName,
  traceHttpServerExchange,
  HTTP_TRACER_NAME,
} from './http-tracing-middleware.js';
export type { HttpTracingOptions } from './http-tracing-middleware.js';
export { createRequestLoggingMiddleware, logHttpExchange } from './request-logging-middleware.js';
export {
  createRequestIdMiddleware,
  getRequestId,
  isAcceptedRequestId,
  requestIdOf,
  REQUEST_ID_HEADER,
} from './request-id-middleware.js';
