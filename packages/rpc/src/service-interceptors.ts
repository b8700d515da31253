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
    createErrorInterceptor({
      onUnexpected: (error, procedure) =>
        logger.error({ err: error, procedure }, 'unexpected error'),
    }),
  ];
}
