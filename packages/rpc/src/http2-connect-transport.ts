import {
  connect,
  constants,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  type Interceptor,
  type Transport,
  type UnaryResponse,
} from '@connectrpc/connect';
import { codeFromHttpStatus, errorFromJsonBytes } from '@connectrpc/connect/protocol-connect';
import { chainUnary, unaryTransport, type UnaryCall } from './unary-chain.js';

export type Http2ConnectTransportOptions = {
  /** `http://host:port` of the service (h2c). */
  baseUrl: string;
  interceptors: readonly Interceptor[];
  defaultTimeoutMs: number;
  /** A PING this often while the session is open notices a dead peer between requests. */
  pingIntervalMs: number;
  /** A PING not answered within this closes the session; the next call opens a new one. */
  pingTimeoutMs: number;
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
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') || value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    // Connect unary: trailers travel as headers prefixed `trailer-`.
    const target = name.startsWith('trailer-') ? trailer : header;
    const key = name.startsWith('trailer-') ? name.slice('trailer-'.length) : name;
    for (const item of values) target.append(key, item);
  }
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
 */
export function createHttp2ConnectTransport(options: Http2ConnectTransportOptions): Transport {
  const sessions = new SessionPool(options);
  const base = options.baseUrl.replace(/\/+$/, '');

  const send =
    (timeoutMs: number): UnaryCall =>
    (request) =>
      new Promise<UnaryResponse>((resolve, reject) => {
        const headers: OutgoingHttpHeaders = {
          [constants.HTTP2_HEADER_METHOD]: 'POST',
          [constants.HTTP2_HEADER_PATH]: `/${request.service.typeName}/${request.method.name}`,
          'content-type': 'application/proto',
          'connect-protocol-version': '1',
          'connect-timeout-ms': String(timeoutMs),
        };
        request.header.forEach((value, name) => {
          if (!RESERVED_HEADERS.has(name)) headers[name] = value;
        });
        let settled = false;
        const fail = (error: ConnectError) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(error);
        };
        const timer = setTimeout(() => {
          stream?.close(constants.NGHTTP2_CANCEL);
          fail(new ConnectError('the service did not answer in time', Code.DeadlineExceeded));
        }, timeoutMs);
        let stream: ReturnType<ClientHttp2Session['request']> | undefined;
        try {
          stream = sessions.get().request(headers);
        } catch (error) {
          fail(unreachable(error));
          return;
        }
        let status = 0;
        let answerHeaders: IncomingHttpHeaders = {};
        const chunks: Buffer[] = [];
        stream.on('response', (incoming) => {
          status = Number(incoming[constants.HTTP2_HEADER_STATUS] ?? 0);
          answerHeaders = incoming;
        });
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', (error) => {
          fail(unreachable(error));
        });
        stream.on('close', () => {
          if (settled) return;
          const body = Buffer.concat(chunks);
          const { header, trailer } = responseHeaders(answerHeaders);
          if (status === 200) {
            let message;
            try {
              message = fromBinary(request.method.output, body);
            } catch (error) {
              fail(
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
            settled = true;
            clearTimeout(timer);
            resolve({
              stream: false,
              service: request.service,
              method: request.method,
              header,
              trailer,
              message,
            } as UnaryResponse);
            return;
          }
          if (status === 0) {
            fail(new ConnectError('the connection to the service ended', Code.Unavailable));
            return;
          }
          // The error body of the Connect protocol; anything else is judged by its status.
          const fallback = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
          try {
            fail(errorFromJsonBytes(body, header, fallback));
          } catch {
            fail(fallback);
          }
        });
        stream.end(toBinary(request.method.input, request.message));
      });

  return unaryTransport({
    urlBase: base,
    defaultTimeoutMs: options.defaultTimeoutMs,
    callWithin: (timeoutMs) => chainUnary(send(timeoutMs), options.interceptors),
    noStreaming: 'streaming calls are not served by this transport',
  });
}
