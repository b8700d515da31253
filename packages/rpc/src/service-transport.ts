import { createRouterTransport, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { createClientTracingInterceptor } from '@gateway/telemetry';
import type { ServiceRoutes } from './service-routes.js';

/**
 * How the edge (or another service) reaches a service: over HTTP/2 with the Connect protocol
 * in split mode, or through Connect's router transport in the all-in-one process. Both run
 * the same client and server interceptors and the same deadline, so the two modes behave
 * alike.
 */
export type ServiceTarget =
  | { kind: 'remote'; baseUrl: string }
  | { kind: 'in-process'; routes: ServiceRoutes; serverInterceptors: Interceptor[] };

export function createServiceTransport(
  target: ServiceTarget,
  options: { timeoutMs: number },
): Transport {
  const interceptors = [createClientTracingInterceptor()];
  if (target.kind === 'remote') {
    return createConnectTransport({
      httpVersion: '2',
      baseUrl: target.baseUrl,
      interceptors,
      defaultTimeoutMs: options.timeoutMs,
      // A PING while calls are open, and before a call on a connection idle for longer, finds
      // a dead peer: its connection closes and the next call opens a new one.
      pingIntervalMs: 30_000,
      pingTimeoutMs: 5_000,
    });
  }
  return createRouterTransport(target.routes, {
    router: { interceptors: target.serverInterceptors },
    transport: { interceptors, defaultTimeoutMs: options.timeoutMs },
  });
}
