import type { Interceptor } from '@connectrpc/connect';
import { createErrorInterceptor } from '@gateway/errors';
import { createServerTracingInterceptor, type Logger } from '@gateway/telemetry';

/**
 * The interceptors every internal service runs, in process or over HTTP/2: tracing first
 * (so the span covers the error mapping), then the error boundary that turns GatewayErrors
 * into Connect errors with their spec code and hides everything else.
 */
export function createServiceInterceptors(logger: Logger): Interceptor[] {
  return [
    createServerTracingInterceptor(),
    createErrorInterceptor({ onUnexpected: unexpectedErrorLog(logger) }),
  ];
}

/**
 * How a service logs a failure it did not raise on purpose (its error boundary, and each item
 * of a batch call): with its stack and the procedure it failed in.
 */
export function unexpectedErrorLog(logger: Logger): (error: unknown, procedure: string) => void {
  return (error, procedure) => logger.error({ err: error, procedure }, 'unexpected error');
}
