import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { fromBinary, toBinary, type DescMethod, type DescMethodUnary } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  type Interceptor,
  type Transport,
  type UnaryResponse,
} from '@connectrpc/connect';
import { codeFromHttpStatus, errorFromJsonBytes } from '@connectrpc/connect/protocol-connect';
import {
  chainUnary,
  copyHttp2Headers,
  methodPath,
  unaryTransport,
  type UnaryCall,
} from './unary-chain.js';

export type Http2ConnectTransportOptions = {
  /** `http://host:port` of the service (h2c). */
  baseUrl: string;
  interceptors: readonly Interceptor[];
  defaultTimeoutMs: number;
  /** A PING this often while the session is open notices a dead peer between requests. */
  pingIntervalMs: number;
  /** A PING not answered within this closes the session; the next call opens a new one. */
  pingTimeoutMs: number;
  /**
   * Methods without side effects whose identical calls made in one turn of the event loop
   * share one request on the wire (`createHttp2ConnectTransport`); none unless listed.
   */
  coalesce?: readonly DescMethod[];
};

/** The one HTTP/2 session to the service, replaced once it closes, errs or is told to go away. */
class SessionPool {
  #session: ClientHttp2Session | undefined;
  readonly #options: Http2ConnectTransportOptions;

  constructor(options: Http2ConnectTransportOptions) {
    this.#options = options;
  }

  get(): ClientHttp2Session {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    const session = connect(this.#options.baseUrl);
    this.#session = session;
    const forget = () => {
      if (this.#session === session) this.#session = undefined;
    };
    // Calls in flight fail through their streams; the next call opens a new session.
    session.on('error', forget);
    session.on('close', forget);
    session.on('goaway', forget);
    session.setTimeout(0);
    const ping = setInterval(() => {
      if (session.closed || session.destroyed) return;
      const deadline = setTimeout(() => session.destroy(), this.#options.pingTimeoutMs);
      deadline.unref();
      const sent = session.ping((error) => {
        clearTimeout(deadline);
        if (error !== null) session.destroy();
      });
      if (!sent) clearTimeout(deadline);
    }, this.#options.pingIntervalMs);
    ping.unref();
    session.once('close', () => clearInterval(ping));
    // Idle sessions do not keep the process alive; a stream in flight does.
    session.unref();
    return session;
  }
}

const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'connect-protocol-version',
  'connect-timeout-ms',
]);

function responseHeaders(headers: IncomingHttpHeaders): { header: Headers; trailer: Headers } {
  const header = new Headers();
  const trailer = new Headers();
  // Connect unary: trailers travel as headers prefixed `trailer-`.
  copyHttp2Headers(headers, header, trailer);
  return { header, trailer };
}

/** UNAVAILABLE, the gateway's 503: the service could not be reached, or dropped the call. */
function unreachable(cause: unknown): ConnectError {
  return new ConnectError(
    'the service cannot be reached',
    Code.Unavailable,
    undefined,
    undefined,
    cause,
  );
}

/** A caller of a wire call, with its own deadline. */
type Waiter = {
  resolve: (response: UnaryResponse) => void;
  reject: (error: ConnectError) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
};

/**
 * One request on the wire and the callers waiting for its answer: one, or several identical
 * calls coalesced into it (see `coalesce`). Each caller keeps its own deadline; the stream is
 * cancelled once no caller waits any more.
 */
class WireCall {
  readonly #method: DescMethodUnary;
  readonly #headers: OutgoingHttpHeaders;
  readonly #body: Uint8Array;
  readonly #waiters: Waiter[] = [];
  #stream: ClientHttp2Stream | undefined;
  #status = 0;
  #answerHeaders: IncomingHttpHeaders | undefined;
  #chunks: Buffer[] = [];
  #settled = false;

  constructor(method: DescMethodUnary, headers: OutgoingHttpHeaders, body: Uint8Array) {
    this.#method = method;
    this.#headers = headers;
    this.#body = body;
  }

  /** One more caller, who gives up after `timeoutMs`. */
  join(timeoutMs: number): Promise<UnaryResponse> {
    return new Promise<UnaryResponse>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => this.#deadlinePassed(waiter), timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Sends the request (unless every caller has given up already). */
  start(sessions: SessionPool): void {
    if (this.#waiters.length === 0) return;
    let stream: ClientHttp2Stream;
    try {
      stream = sessions.get().request(this.#headers);
    } catch (error) {
      this.#fail(unreachable(error));
      return;
    }
    this.#stream = stream;
    stream.on('response', (incoming: IncomingHttpHeaders) => {
      this.#status = Number(incoming[constants.HTTP2_HEADER_STATUS] ?? 0);
      this.#answerHeaders = incoming;
    });
    stream.on('data', (chunk: Buffer) => this.#chunks.push(chunk));
    stream.on('error', (error: Error) => this.#fail(unreachable(error)));
    stream.on('close', () => this.#closed());
    stream.end(this.#body);
  }

  #deadlinePassed(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index < 0) return;
    this.#waiters.splice(index, 1);
    if (this.#waiters.length === 0) this.#stream?.close(constants.NGHTTP2_CANCEL);
    waiter.reject(new ConnectError('the service did not answer in time', Code.DeadlineExceeded));
  }

  #fail(error: ConnectError): void {
    if (this.#settled) return;
    this.#settled = true;
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }

  #closed(): void {
    if (this.#settled) return;
    const status = this.#status;
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    const { header, trailer } = responseHeaders(this.#answerHeaders ?? {});
    if (status === 200) {
      const method = this.#method;
      let message;
      try {
        message = fromBinary(method.output, body);
      } catch (error) {
        this.#fail(
          new ConnectError(
            'the service answered an unreadable message',
            Code.Internal,
            undefined,
            undefined,
            error,
          ),
        );
        return;
      }
      this.#settled = true;
      for (const waiter of this.#waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.resolve({
          stream: false,
          service: method.parent,
          method,
          header,
          trailer,
          message,
        } as UnaryResponse);
      }
      return;
    }
    if (status === 0) {
      this.#fail(new ConnectError('the connection to the service ended', Code.Unavailable));
      return;
    }
    // The error body of the Connect protocol; anything else is judged by its status.
    const fallback = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
    let error: ConnectError;
    try {
      error = errorFromJsonBytes(body, header, fallback);
    } catch {
      error = fallback;
    }
    this.#fail(error);
  }
}

/** Whether a Headers object holds nothing. */
function isEmpty(headers: Headers): boolean {
  for (const _name of headers.keys()) return false;
  return true;
}

/**
 * Issue 8: unary Connect calls (binary protocol) over one HTTP/2 session, for split mode's
 * hot path. connect-node's transport builds several AbortControllers, web Headers and async
 * iterables per call and aborts them at its end (a DOMException with a stack trace each);
 * in split mode that was a third of the edge's CPU per introspection. This transport speaks
 * the same Connect protocol (any Connect server answers it, and the services' Connect
 * servers are unchanged), runs the same interceptors, and keeps the behaviour callers rely
 * on: the deadline (sent as `connect-timeout-ms` and enforced here: the stream is cancelled
 * and the call fails DEADLINE_EXCEEDED), UNAVAILABLE for a peer that cannot be reached or
 * drops the connection, the service's error with its details, and a PING that notices a dead
 * peer between calls. Streaming calls are not served (the gateway makes none).
 *
 * Coalescing (`coalesce`): a call of a listed method that carries no headers of its own (no
 * trace context, so never while spans are recorded) is sent at the end of the current turn of
 * the event loop (`setImmediate`) rather than at once, and an identical call made before then
 * (same method, message bytes and deadline) joins it instead of sending its own: one request,
 * one answer (or error) for every caller. A call never joins one that has been sent, so every
 * caller's request reaches the service after that caller started: whatever was written before
 * a call started (a revocation) is seen by it, as without coalescing. Each caller keeps its
 * own deadline; the request is cancelled once no caller waits for it. Callers share the
 * answer's message and headers and must treat them as read-only.
 */
export function createHttp2ConnectTransport(options: Http2ConnectTransportOptions): Transport {
  const sessions = new SessionPool(options);
  const base = options.baseUrl.replace(/\/+$/, '');
  const paths = new Map<DescMethod, string>();
  const pathOf = (method: DescMethod): string => {
    let path = paths.get(method);
    if (path === undefined) {
      path = methodPath(method);
      paths.set(method, path);
    }
    return path;
  };
  const coalesced = new Set<DescMethod>(options.coalesce ?? []);
  /** Coalesced calls of this turn of the event loop, not sent yet, by what they ask. */
  let unsent: Map<string, WireCall> | undefined;
  const sendUnsent = () => {
    const calls = unsent;
    unsent = undefined;
    calls?.forEach((call) => call.start(sessions));
  };

  const send = (timeoutMs: number): UnaryCall => {
    const timeoutHeader = String(timeoutMs);
    return (request) => {
      const headers: OutgoingHttpHeaders = {
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: pathOf(request.method),
        'content-type': 'application/proto',
        'connect-protocol-version': '1',
        'connect-timeout-ms': timeoutHeader,
      };
      request.header.forEach((value, name) => {
        if (!RESERVED_HEADERS.has(name)) headers[name] = value;
      });
      const body = toBinary(request.method.input, request.message);
      if (coalesced.has(request.method) && isEmpty(request.header)) {
        const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
        const key = `${timeoutHeader} ${pathOf(request.method)} ${bytes.toString('latin1')}`;
        let call = unsent?.get(key);
        if (call === undefined) {
          call = new WireCall(request.method, headers, body);
          if (unsent === undefined) {
            unsent = new Map();
            setImmediate(sendUnsent);
          }
          unsent.set(key, call);
        }
        return call.join(timeoutMs);
      }
      const call = new WireCall(request.method, headers, body);
      const answer = call.join(timeoutMs);
      call.start(sessions);
      return answer;
    };
  };

  return unaryTransport({
    urlBase: base,
    defaultTimeoutMs: options.defaultTimeoutMs,
    callWithin: (timeoutMs) => chainUnary(send(timeoutMs), options.interceptors),
    noStreaming: 'streaming calls are not served by this transport',
  });
}
