import { create, isMessage, type DescMessage } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
} from '@connectrpc/connect';
import type { ServiceRoutes } from './service-routes.js';
import { createUnaryDispatcher } from './unary-dispatcher.js';
import { chainUnary, NEVER_ABORTED, type UnaryCall } from './unary-chain.js';

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
  const defaultCall = callWithin(options.timeoutMs);

  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      signal?.throwIfAborted();
      const message = isMessage(input, method.input)
        ? input
        : create(method.input as DescMessage, input as never);
      const deadlineMs = timeoutMs ?? options.timeoutMs;
      const call = deadlineMs === options.timeoutMs ? defaultCall : callWithin(deadlineMs);
      return (await call({
        stream: false,
        service: method.parent,
        method,
        requestMethod: 'POST',
        url: `in-process:/${method.parent.typeName}/${method.name}`,
        signal: signal ?? NEVER_ABORTED,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message,
      } as UnaryRequest)) as never;
    },
    stream() {
      return Promise.reject(
        new ConnectError('streaming calls are not served in process', Code.Unimplemented),
      );
    },
  };
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
