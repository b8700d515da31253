import { Code, ConnectError, type Interceptor, type Transport } from '@connectrpc/connect';
import type { ServiceRoutes } from './service-routes.js';
import { chainUnary, unaryTransport, type UnaryCall } from './unary-chain.js';
import { createUnaryDispatcher } from './unary-dispatcher.js';

/**
 * Issue 8: the all-in-one process's service calls without the wire. Connect's router
 * transport serialises every request and answer to protobuf bytes and back and gives each
 * call an AbortController whose end-of-call abort builds a DOMException; on the hot paths
 * that was a quarter of the gateway's CPU. This transport hands the request message to the
 * service's implementation and its answer back, through the same client and server
 * interceptors (tracing, the error boundary), so errors and spans are those of split mode.
 *
 * Deadlines: the caller gets DEADLINE_EXCEEDED (503 at the edge) when the implementation has
 * not answered within `timeoutMs`, as over the wire; the implementation is not told (its
 * `signal` never aborts), and PostgreSQL and Redis bound their own waits. Answers are not
 * copied: callers must treat them as read-only, as they do.
 */
export function createInProcessTransport(
  routes: ServiceRoutes,
  options: {
    serverInterceptors: readonly Interceptor[];
    clientInterceptors: readonly Interceptor[];
    timeoutMs: number;
  },
): Transport {
  const serve = chainUnary(createUnaryDispatcher(routes).call, options.serverInterceptors);
  // The deadline sits inside the client interceptors, as over the wire: the caller's span
  // (and its dependency-error count) ends with DEADLINE_EXCEEDED when the caller gets it.
  const callWithin = (timeoutMs: number): UnaryCall =>
    chainUnary((request) => withDeadline(serve(request), timeoutMs), options.clientInterceptors);
  return unaryTransport({
    urlBase: 'in-process:',
    defaultTimeoutMs: options.timeoutMs,
    callWithin,
    noStreaming: 'streaming calls are not served in process',
  });
}

function withDeadline<T>(answer: Promise<T>, timeoutMs: number): Promise<T> {
  if (!(timeoutMs > 0)) return answer;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ConnectError('the service did not answer in time', Code.DeadlineExceeded));
    }, timeoutMs);
    answer.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
