import type { Interceptor, UnaryRequest, UnaryResponse } from '@connectrpc/connect';

/** One unary call through a transport's interceptors. */
export type UnaryCall = (request: UnaryRequest) => Promise<UnaryResponse>;

type AnyCall = Parameters<Interceptor>[0];

/** A signal for calls whose caller passed none: never aborted. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** The interceptors around `call`, the first one outermost (as Connect applies them). */
export function chainUnary(call: UnaryCall, interceptors: readonly Interceptor[]): UnaryCall {
  let next = call as AnyCall;
  for (const interceptor of [...interceptors].reverse()) next = interceptor(next);
  return next as UnaryCall;
}
