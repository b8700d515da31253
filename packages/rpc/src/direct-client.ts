import {
  create,
  isMessage,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
} from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type CallOptions,
  type Client,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import { createClientTracingInterceptor } from '@gateway/telemetry';

type UnaryCall = (request: UnaryRequest) => Promise<UnaryResponse>;
type UnaryImplementation = (request: unknown, context: HandlerContext) => unknown;
type DirectClientOptions = {
  /** The service's interceptors (tracing, the error boundary), around the implementation. */
  serverInterceptors: readonly Interceptor[];
  timeoutMs: number;
};

/** The signal of calls whose caller passed none: the deadline is a timer, not a signal. */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** A call's deadline (epoch ms), which the implementation reads as `context.timeoutMs()`. */
const callDeadline = createContextKey<number | undefined>(undefined, {
  description: 'deadline of a direct call',
});

/**
 * A Client of `service` whose unary calls go straight to `implementation` in this process: the
 * request message is handed to the method and its answer handed back, neither encoded nor
 * copied (callers treat answers as read-only). Connect's router transport would encode and
 * decode both, at many times the cost of a call on the hot path. The client interceptors
 * (tracing, as connectService's remote transport) run around the deadline, the server interceptors
 * around the implementation, as over the wire, so spans and errors are those of split mode.
 * At the deadline the caller gets DEADLINE_EXCEEDED; the implementation is not told (its
 * signal never aborts), and PostgreSQL and Redis bound their own waits. It may read the time
 * left (`context.timeoutMs()`), as over the wire, to stop work whose caller has gone.
 * Streaming methods, and methods left out, answer UNIMPLEMENTED.
 */
export function createDirectClient<S extends DescService>(
  service: S,
  implementation: Partial<ServiceImpl<S>>,
  options: DirectClientOptions,
): Client<S> {
  const clientInterceptors = [createClientTracingInterceptor()];
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    const impl = (implementation as Partial<Record<string, UnaryImplementation>>)[method.localName];
    client[method.localName] =
      isUnary(method) && impl !== undefined
        ? directCall(method, impl.bind(implementation), { ...options, clientInterceptors })
        : () => refuse(method);
  }
  return client as Client<S>;
}

function directCall(
  method: DescMethodUnary,
  implementation: UnaryImplementation,
  options: DirectClientOptions & { clientInterceptors: readonly Interceptor[] },
): (input: unknown, callOptions?: CallOptions) => Promise<unknown> {
  const url = `in-process:/${method.parent.typeName}/${method.name}`;
  const serve = chain(options.serverInterceptors, async (request) => {
    const context = handlerContext(request);
    const answer = await implementation(request.message, context);
    return {
      stream: false,
      service: method.parent,
      method,
      header: context.responseHeader,
      trailer: context.responseTrailer,
      message: isMessage(answer, method.output) ? answer : create(method.output, answer as never),
    } as UnaryResponse;
  });
  // The chain is built once; each call carries its deadline in its context values.
  const call = chain(options.clientInterceptors, (request) =>
    withDeadline(serve(request), request.contextValues.get(callDeadline), request.signal),
  );
  return async (input, callOptions = {}) => {
    const timeoutMs = callOptions.timeoutMs ?? options.timeoutMs;
    const contextValues = callOptions.contextValues ?? createContextValues();
    contextValues.set(callDeadline, timeoutMs > 0 ? Date.now() + timeoutMs : undefined);
    const response = await call({
      stream: false,
      service: method.parent,
      method,
      requestMethod: 'POST',
      url,
      signal: callOptions.signal ?? NEVER_ABORTED,
      header: new Headers(callOptions.headers),
      contextValues,
      message: isMessage(input, method.input) ? input : create(method.input, input as never),
    } as UnaryRequest);
    callOptions.onHeader?.(response.header);
    callOptions.onTrailer?.(response.trailer);
    return response.message;
  };
}

/** The interceptors around `call`, the first one outermost, as Connect applies them. */
function chain(interceptors: readonly Interceptor[], call: UnaryCall): UnaryCall {
  return interceptors.reduceRight(
    (next, interceptor) => interceptor(next as never) as UnaryCall,
    call,
  );
}

/** What an implementation may read of its call; nothing in this process aborts it. */
function handlerContext(request: UnaryRequest): HandlerContext {
  const deadline = request.contextValues.get(callDeadline);
  return {
    service: request.service,
    method: request.method,
    protocolName: 'in-process',
    requestMethod: request.requestMethod,
    url: request.url,
    signal: NEVER_ABORTED,
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestHeader: request.header,
    responseHeader: new Headers(),
    responseTrailer: new Headers(),
    values: request.contextValues,
    abort: () => undefined,
  } as unknown as HandlerContext;
}

/**
 * The answer, or DEADLINE_EXCEEDED at `deadline` (epoch ms; none when undefined), or CANCELED
 * when `signal` aborts.
 */
function withDeadline<T>(
  answer: Promise<T>,
  deadline: number | undefined,
  signal: AbortSignal,
): Promise<T> {
  const cancellable = signal !== NEVER_ABORTED;
  if (deadline === undefined && !cancellable) return answer;
  const timeoutMs = deadline === undefined ? 0 : Math.max(1, deadline - Date.now());
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (settled: () => void) => {
      clearTimeout(timer);
      if (cancellable) signal.removeEventListener('abort', onAbort);
      settled();
    };
    const onAbort = () => settle(() => reject(ConnectError.from(signal.reason, Code.Canceled)));
    if (cancellable) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const late = new ConnectError('the service did not answer in time', Code.DeadlineExceeded);
        settle(() => reject(late));
      }, timeoutMs);
    }
    answer.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/**
 * Streaming methods, and methods the implementation leaves out: UNIMPLEMENTED, as a router
 * answers them, as a promise or, for methods that answer a stream, as that stream.
 */
function refuse(method: DescMethod): Promise<never> | AsyncIterable<never> {
  const error = new ConnectError(
    `${method.parent.typeName}.${method.name} is not implemented in process`,
    Code.Unimplemented,
  );
  if (method.methodKind === 'unary' || method.methodKind === 'client_streaming') {
    return Promise.reject(error);
  }
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
}

function isUnary(method: DescMethod): method is DescMethodUnary {
  return method.methodKind === 'unary';
}
