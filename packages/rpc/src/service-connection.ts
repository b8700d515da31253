import type { DescService } from '@bufbuild/protobuf';
import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { createClientTracingInterceptor } from '@gateway/telemetry';
import { createDirectClient } from './direct-client.js';
import { findImplementation, type ServiceImplementation } from './service-implementations.js';

/**
 * How the edge (or another service) reaches a service: over HTTP/2 with the Connect protocol
 * in split mode, or in the all-in-one process straight to the implementations made there
 * (createDirectClient: the request and answer messages are handed over, never encoded). Both
 * run the same client and server interceptors and the same deadline, so the two modes behave
 * alike.
 */
export type ServiceTarget =
  | { kind: 'remote'; baseUrl: string }
  | {
      kind: 'in-process';
      implementations: readonly ServiceImplementation[];
      serverInterceptors: readonly Interceptor[];
    };

/** The clients of one target's services; over the wire they share one HTTP/2 session. */
export type ServiceConnection = {
  readonly kind: ServiceTarget['kind'];
  client<S extends DescService>(service: S): Client<S>;
};

/** The one way to call a service, in process or over the wire. */
export function connectService(
  target: ServiceTarget,
  options: { timeoutMs: number },
): ServiceConnection {
  if (target.kind === 'in-process') {
    return {
      kind: target.kind,
      client: (service) =>
        createDirectClient(service, findImplementation(target.implementations, service), {
          serverInterceptors: target.serverInterceptors,
          timeoutMs: options.timeoutMs,
        }),
    };
  }
  const transport = createConnectTransport({
    httpVersion: '2',
    baseUrl: target.baseUrl,
    interceptors: [createClientTracingInterceptor()],
    defaultTimeoutMs: options.timeoutMs,
    // Nothing is compressed between services: they sit on one network, where gzip costs
    // both sides more CPU than the bytes it saves (a batch of answers passes 1 KiB, beyond
    // which a server compresses for a client that accepts it).
    acceptCompression: [],
    // A PING while calls are open, and before a call on a connection idle for longer, finds
    // a dead peer: its connection closes and the next call opens a new one.
    pingIntervalMs: 30_000,
    pingTimeoutMs: 5_000,
  });
  return { kind: target.kind, client: (service) => createClient(service, transport) };
}
