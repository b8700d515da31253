import type { IncomingHttpHeaders } from 'node:http2';
import { create, isMessage, type DescMessage, type DescMethod } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';

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

/**
 * A Transport of unary calls only: each call becomes a UnaryRequest for `callWithin(its
 * deadline)` (built once for the default deadline); streaming calls are refused.
 */
export function unaryTransport(options: {
  /** The request's `url`: `<urlBase>/<service>/<method>`. */
  urlBase: string;
  defaultTimeoutMs: number;
  callWithin: (timeoutMs: number) => UnaryCall;
  /** Why streaming calls are refused. */
  noStreaming: string;
}): Transport {
  const defaultCall = options.callWithin(options.defaultTimeoutMs);
  const urls = new Map<DescMethod, string>();
  const urlOf = (method: DescMethod): string => {
    let url = urls.get(method);
    if (url === undefined) {
      url = `${options.urlBase}${methodPath(method)}`;
      urls.set(method, url);
    }
    return url;
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      signal?.throwIfAborted();
      const message = isMessage(input, method.input)
        ? input
        : create(method.input as DescMessage, input as never);
      const deadlineMs = timeoutMs ?? options.defaultTimeoutMs;
      const call =
        deadlineMs === options.defaultTimeoutMs ? defaultCall : options.callWithin(deadlineMs);
      return (await call({
        stream: false,
        service: method.parent,
        method,
        requestMethod: 'POST',
        url: urlOf(method),
        signal: signal ?? NEVER_ABORTED,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message,
      } as UnaryRequest)) as never;
    },
    stream() {
      return Promise.reject(new ConnectError(options.noStreaming, Code.Unimplemented));
    },
  };
}

/** The HTTP path of a method, as Connect routes it: `/<package.Service>/<Method>`. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Copies an HTTP/2 header block (pseudo-headers left out) into `header`; with `trailer`, the
 * fields a Connect unary answer prefixes `trailer-` go there, unprefixed.
 */
export function copyHttp2Headers(
  incoming: IncomingHttpHeaders,
  header: Headers,
  trailer?: Headers,
): void {
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || name.startsWith(':')) continue;
    const isTrailer = trailer !== undefined && name.startsWith('trailer-');
    const target = isTrailer ? trailer : header;
    const key = isTrailer ? name.slice('trailer-'.length) : name;
    if (typeof value === 'string') target.append(key, value);
    else for (const item of value) target.append(key, item);
  }
}
