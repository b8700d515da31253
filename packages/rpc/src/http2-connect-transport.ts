import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import {
  create,
  fromBinary,
  toBinary,
  type DescMethod,
  type DescMethodUnary,
} from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  type Interceptor,
  type Transport,
  type UnaryResponse,
} from '@connectrpc/connect';
import { codeFromHttpStatus, errorFromJsonBytes } from '@connectrpc/connect/protocol-connect';
import {
  BatchService,
  CallManyRequestSchema,
  CallManyResponseSchema,
  type BatchedAnswer,
} from '@gateway/contracts';
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
  /**
   * Methods whose calls of one turn of the event loop, when they carry no headers of their
   * own, go together on one stream (`BatchService.CallMany`) instead of a stream each; none
   * unless listed. A batch is answered when its slowest call is, so list methods of like
   * cost only (`createHttp2ConnectTransport`).
   */
  batch?: readonly DescMethod[];
};

/** The most calls one batch carries; more of one turn go in several. */
const MAX_BATCH = 128;

/** Where a batch goes (proto/rpc/v1/batch.proto). */
const BATCH_PATH = methodPath(BatchService.method.callMany);

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

/** The HTTP/2 headers of a Connect unary request in the binary format, with `extra` ones. */
function connectHeaders(path: string, timeoutHeader: string, extra?: Headers): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: path,
    'content-type': 'application/proto',
    'connect-protocol-version': '1',
    'connect-timeout-ms': timeoutHeader,
  };
  extra?.forEach((value, name) => {
    if (!RESERVED_HEADERS.has(name)) headers[name] = value;
  });
  return headers;
}

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

/** How a request's stream ended: with an answer (status 0: none came), or with an error. */
type StreamEnd =
  { error: unknown } | { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** Sends one request on the session; `ended` is told once how its stream ended. */
function sendRequest(
  sessions: SessionPool,
  headers: OutgoingHttpHeaders,
  body: Uint8Array,
  ended: (end: StreamEnd) => void,
): ClientHttp2Stream | undefined {
  let stream: ClientHttp2Stream;
  try {
    stream = sessions.get().request(headers);
  } catch (error) {
    ended({ error });
    return undefined;
  }
  let status = 0;
  let answerHeaders: IncomingHttpHeaders = {};
  const chunks: Buffer[] = [];
  let done = false;
  stream.on('response', (incoming: IncomingHttpHeaders) => {
    status = Number(incoming[constants.HTTP2_HEADER_STATUS] ?? 0);
    answerHeaders = incoming;
  });
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('error', (error: Error) => {
    if (done) return;
    done = true;
    ended({ error });
  });
  stream.on('close', () => {
    if (done) return;
    done = true;
    const answer = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    ended({ status, headers: answerHeaders, body: answer });
  });
  stream.end(body);
  return stream;
}

/** The error a Connect JSON error body carries (details included), else `fallback`. */
function errorOfBody(body: Uint8Array, header: Headers, fallback: ConnectError): ConnectError {
  try {
    return errorFromJsonBytes(body, header, fallback);
  } catch {
    return fallback;
  }
}

/** The error of an answer other than 200: the Connect error body, else judged by the status. */
function errorOfAnswer(status: number, header: Headers, body: Buffer): ConnectError {
  if (status === 0)
    return new ConnectError('the connection to the service ended', Code.Unavailable);
  return errorOfBody(
    body,
    header,
    new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header),
  );
}

/**
 * One call on the wire and the callers waiting for its answer: one, or several identical
 * calls coalesced into it (see `coalesce`). It goes on a stream of its own (`start`) or in a
 * batch with others (`BatchCall`). Each caller keeps its own deadline; the call is cancelled
 * once no caller waits any more.
 */
class WireCall {
  readonly #method: DescMethodUnary;
  readonly #path: string;
  readonly #timeoutHeader: string;
  readonly #header: Headers;
  readonly #body: Uint8Array;
  readonly #waiters: Waiter[] = [];
  #stream: ClientHttp2Stream | undefined;
  #settled = false;
  /** For a call in a batch: told when its last caller gives up (it has no stream to cancel). */
  onAbandoned: (() => void) | undefined;

  /** Its HTTP/2 headers are built only if it goes on a stream of its own. */
  constructor(
    method: DescMethodUnary,
    path: string,
    timeoutHeader: string,
    header: Headers,
    body: Uint8Array,
  ) {
    this.#method = method;
    this.#path = path;
    this.#timeoutHeader = timeoutHeader;
    this.#header = header;
    this.#body = body;
  }

  /** The call as a batch carries it. */
  get batched(): { path: string; message: Uint8Array } {
    return { path: this.#path, message: this.#body };
  }

  /** Whether any caller still waits for the answer. */
  get waiting(): boolean {
    return this.#waiters.length > 0;
  }

  /** One more caller, who gives up after `timeoutMs`. */
  join(timeoutMs: number): Promise<UnaryResponse> {
    return new Promise<UnaryResponse>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => this.#deadlinePassed(waiter), timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Sends the call on a stream of its own (unless every caller has given up already). */
  start(sessions: SessionPool): void {
    if (this.#waiters.length === 0) return;
    const headers = connectHeaders(this.#path, this.#timeoutHeader, this.#header);
    this.#stream = sendRequest(sessions, headers, this.#body, (end) => {
      if ('error' in end) {
        this.fail(unreachable(end.error));
        return;
      }
      const { header, trailer } = responseHeaders(end.headers);
      if (end.status === 200) this.#answer(end.body, header, trailer);
      else this.fail(errorOfAnswer(end.status, header, end.body));
    });
  }

  /** The answer the call got in a batch: its message, or its error. */
  settleBatched(answer: BatchedAnswer): void {
    const header = new Headers(Object.entries(answer.header));
    const { result } = answer;
    if (result.case === 'message') {
      this.#answer(result.value, header, new Headers(Object.entries(answer.trailer)));
      return;
    }
    if (result.case === 'error') {
      const fallback = new ConnectError('the service failed the call', Code.Unknown, header);
      this.fail(errorOfBody(result.value, header, fallback));
      return;
    }
    this.fail(new ConnectError('the service answered an empty result', Code.Internal));
  }

  /** Every caller still waiting gets `error`. */
  fail(error: ConnectError): void {
    if (this.#settled) return;
    this.#settled = true;
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }

  #deadlinePassed(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index < 0) return;
    this.#waiters.splice(index, 1);
    if (this.#waiters.length === 0) {
      this.#stream?.close(constants.NGHTTP2_CANCEL);
      this.onAbandoned?.();
    }
    waiter.reject(new ConnectError('the service did not answer in time', Code.DeadlineExceeded));
  }

  /** The response message decoded and handed to every caller. */
  #answer(body: Uint8Array, header: Headers, trailer: Headers): void {
    if (this.#settled) return;
    const method = this.#method;
    let message;
    try {
      message = fromBinary(method.output, body);
    } catch (error) {
      this.fail(
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
  }
}

/**
 * Calls of one turn sent together on one stream (`BatchService.CallMany`, served by every
 * service's RPC server, rpc-server.ts), each answered with its own message or error. The
 * stream is cancelled once no caller of any of its calls waits any more.
 */
class BatchCall {
  readonly #calls: WireCall[];
  #stream: ClientHttp2Stream | undefined;

  constructor(calls: WireCall[]) {
    this.#calls = calls;
    for (const call of calls) call.onAbandoned = () => this.#abandoned();
  }

  /**
   * Sends the batch. A peer that does not serve batches (an older version, during a rolling
   * upgrade) answers UNIMPLEMENTED without serving any call: `unsupported` gets the calls.
   */
  start(
    sessions: SessionPool,
    headers: OutgoingHttpHeaders,
    unsupported: (calls: WireCall[]) => void,
  ): void {
    const calls = this.#calls;
    const request = create(CallManyRequestSchema, { calls: calls.map((call) => call.batched) });
    const failAll = (error: ConnectError) => {
      for (const call of calls) call.fail(error);
    };
    this.#stream = sendRequest(
      sessions,
      headers,
      toBinary(CallManyRequestSchema, request),
      (end) => {
        if ('error' in end) {
          failAll(unreachable(end.error));
          return;
        }
        if (end.status !== 200) {
          const error = errorOfAnswer(end.status, responseHeaders(end.headers).header, end.body);
          if (error.code === Code.Unimplemented) unsupported(calls);
          else failAll(error);
          return;
        }
        let answers: BatchedAnswer[];
        try {
          answers = fromBinary(CallManyResponseSchema, end.body).answers;
        } catch (error) {
          failAll(
            new ConnectError(
              'the service answered an unreadable batch',
              Code.Internal,
              undefined,
              undefined,
              error,
            ),
          );
          return;
        }
        if (answers.length !== calls.length) {
          failAll(new ConnectError('the service answered a batch of another size', Code.Internal));
          return;
        }
        calls.forEach((call, index) => call.settleBatched(answers[index] as BatchedAnswer));
      },
    );
  }

  #abandoned(): void {
    if (this.#calls.every((call) => !call.waiting)) {
      this.#stream?.close(constants.NGHTTP2_CANCEL);
    }
  }
}

/** Message bytes as a string, one character per byte (a map key for identical calls). */
function asLatin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
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
 *
 * Batching (`batch`): opening a stream costs more than anything else of a call in node's
 * HTTP/2 client (its `request()` alone was about 16% of the edge's CPU per introspection in
 * split mode, about 40% of that in `AsyncResource.bind`). So a call of a listed method that
 * carries no headers of its own (no trace context) waits for the end of the current turn of
 * the event loop (`setImmediate`), and the turn's calls go together on one stream to
 * `BatchService.CallMany` (proto/rpc/v1/batch.proto), which every service's RPC server serves:
 * each call as if it had come on a stream of its own, through the same interceptors, with its
 * own answer or error (details included). Unlike coalescing, every call is served, so methods
 * with side effects may be listed too. But the batch is answered when its slowest call is:
 * only methods of like cost belong in the list (a call that waits on an identity provider
 * would hold up every introspection of its turn). A turn with one call sends it on its own
 * stream. Coalescing and batching share the turn's queue: a coalesced call of a listed method
 * goes in the batch like any other. Each caller keeps its own deadline, and the batch's
 * stream is cancelled once no caller of any of its calls waits. A peer that answers a batch
 * UNIMPLEMENTED (a version without batches, during a rolling upgrade) served none of it: its
 * calls are sent one by one, and so is every later call to that peer.
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
  const batched = new Set<DescMethod>(options.batch ?? []);
  /** Whether the peer serves batches; false once it answered one UNIMPLEMENTED. */
  let peerBatches = batched.size > 0;

  /**
   * The calls that wait for the end of this turn of the event loop: coalesced ones by what
   * they ask (to find the call an identical one joins), and each either in a batch (by its
   * deadline header) or on its own.
   */
  let turn:
    | { asked: Map<string, WireCall>; batches: Map<string, WireCall[]>; alone: WireCall[] }
    | undefined;
  const unsupported = (calls: WireCall[]) => {
    peerBatches = false;
    for (const call of calls) {
      call.onAbandoned = undefined;
      call.start(sessions);
    }
  };
  const sendTogether = (calls: WireCall[], timeoutHeader: string) => {
    const waiting = calls.filter((call) => call.waiting);
    for (let first = 0; first < waiting.length; first += MAX_BATCH) {
      const some = waiting.slice(first, first + MAX_BATCH);
      if (some.length === 1 || !peerBatches) {
        for (const call of some) call.start(sessions);
      } else {
        new BatchCall(some).start(sessions, connectHeaders(BATCH_PATH, timeoutHeader), unsupported);
      }
    }
  };
  const sendTurn = () => {
    const pending = turn;
    turn = undefined;
    if (pending === undefined) return;
    for (const call of pending.alone) call.start(sessions);
    pending.batches.forEach(sendTogether);
  };

  const send = (timeoutMs: number): UnaryCall => {
    const timeoutHeader = String(timeoutMs);
    return (request) => {
      const { method, header } = request;
      const path = pathOf(method);
      const body = toBinary(method.input, request.message);
      const plain = isEmpty(header);
      const together = plain && peerBatches && batched.has(method);
      const joinable = plain && coalesced.has(method);
      if (!together && !joinable) {
        const call = new WireCall(method, path, timeoutHeader, header, body);
        const answer = call.join(timeoutMs);
        call.start(sessions);
        return answer;
      }
      if (turn === undefined) {
        turn = { asked: new Map(), batches: new Map(), alone: [] };
        setImmediate(sendTurn);
      }
      const key = joinable ? `${timeoutHeader} ${path} ${asLatin1(body)}` : undefined;
      let call = key === undefined ? undefined : turn.asked.get(key);
      if (call === undefined) {
        call = new WireCall(method, path, timeoutHeader, header, body);
        if (key !== undefined) turn.asked.set(key, call);
        if (together) {
          const calls = turn.batches.get(timeoutHeader);
          if (calls === undefined) turn.batches.set(timeoutHeader, [call]);
          else calls.push(call);
        } else {
          turn.alone.push(call);
        }
      }
      return call.join(timeoutMs);
    };
  };

  return unaryTransport({
    urlBase: base,
    defaultTimeoutMs: options.defaultTimeoutMs,
    callWithin: (timeoutMs) => chainUnary(send(timeoutMs), options.interceptors),
    noStreaming: 'streaming calls are not served by this transport',
  });
}
