import type { DescMethod } from '@bufbuild/protobuf';
import type { Interceptor, Transport } from '@connectrpc/connect';
import { createClientTracingInterceptor } from '@gateway/telemetry';
import { createHttp2ConnectTransport } from './http2-connect-transport.js';
import { createInProcessTransport } from './in-process-transport.js';
import type { ServiceRoutes } from './service-routes.js';

/**
 * How the edge (or another service) reaches a service: over HTTP/2 Connect in split mode,
 * or in the same process by calling its implementation (in-process-transport.ts) in the
 * all-in-one process. Both run the same interceptors and the same deadline, so the two modes
 * behave alike.
 */
export type ServiceTarget =
  | { kind: 'remote'; baseUrl: string }
  | { kind: 'in-process'; routes: ServiceRoutes; serverInterceptors: Interceptor[] };

export function createServiceTransport(
  target: ServiceTarget,
  options: {
    timeoutMs: number;
    /**
     * Over the wire only: methods without side effects whose identical calls of one turn of
     * the event loop share one request (http2-connect-transport.ts). In process a call costs
     * less than coalescing it would.
     */
    coalesce?: readonly DescMethod[];
    /**
     * Over the wire only: methods of like cost whose calls of one turn of the event loop go
     * together on one stream (http2-connect-transport.ts).
     */
    batch?: readonly DescMethod[];
  },
): Transport {
  const interceptors = [createClientTracingInterceptor()];
  if (target.kind === 'remote') {
    return createHttp2ConnectTransport({
      baseUrl: target.baseUrl,
      interceptors,
      defaultTimeoutMs: options.timeoutMs,
      // Notice a dead peer between requests instead of on the next call.
      pingIntervalMs: 30_000,
      pingTimeoutMs: 5_000,
      ...(options.coalesce === undefined ? {} : { coalesce: options.coalesce }),
      ...(options.batch === undefined ? {} : { batch: options.batch }),
    });
  }
  return createInProcessTransport(target.routes, {
    serverInterceptors: target.serverInterceptors,
    clientInterceptors: interceptors,
    timeoutMs: options.timeoutMs,
  });
}
