import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * Keep-alive connections per identity provider, the most recently used first, so a busy
 * gateway reuses a few warm sockets rather than opening one per sign-in.
 */
const agents = {
  'http:': new HttpAgent({ keepAlive: true, scheduling: 'lifo' }),
  'https:': new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }),
};

/**
 * The `fetch` that openid-client and jose are given (their `customFetch`), on node:http and
 * node:https with keep-alive agents: a token request costs one write and one read on a warm
 * socket, without the WHATWG fetch machinery (streams, dispatcher) around them. It does what
 * those libraries ask of fetch:
 * - the method, headers and a string or URLSearchParams body of `init`;
 * - `init.signal` ends the request; the promise rejects with the signal's reason, as fetch's
 *   does (openid-client and jose bound every call with `AbortSignal.timeout`);
 * - redirects are not followed (the libraries ask for `redirect: 'manual'`): a 3xx is the
 *   answer;
 * - a body in gzip, deflate or br is decoded, as fetch does;
 * - the answer is read whole (an identity provider's answers are small documents) and given as
 *   a BufferedResponse, which the libraries read without a body stream;
 * - a keep-alive socket that the provider closed while idle is retried once on a new one.
 */
export async function nodeHttpFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new TypeError(`fetch: unsupported protocol ${target.protocol}`);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted === true) throw signal.reason;
  const body = bodyText(init.body);
  const headers = requestHeaders(init, body);
  return send(target, init.method ?? 'GET', headers, body, signal, true);
}

function bodyText(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof URLSearchParams) return body.toString();
  throw new TypeError('fetch: only string and URLSearchParams bodies are sent');
}

function requestHeaders(init: RequestInit, body: string | undefined): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  if (body !== undefined) {
    if (headers['content-type'] === undefined && init.body instanceof URLSearchParams) {
      headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
    }
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return headers;
}

function send(
  target: URL,
  method: string,
  headers: OutgoingHttpHeaders,
  body: string | undefined,
  signal: AbortSignal | undefined,
  pooled: boolean,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const protocol = target.protocol as 'http:' | 'https:';
    const request: ClientRequest = (protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method,
      headers,
      agent: pooled ? agents[protocol] : false,
    });
    let answered = false;
    const onAbort = () => request.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return;
      answered = true;
      done();
      if (signal?.aborted === true) reject(signal.reason);
      else if (pooled && closedWhileIdle(request, error)) {
        resolve(send(target, method, headers, body, signal, false));
      } else reject(new TypeError('fetch failed', { cause: error }));
    });
    request.on('response', (answer) => {
      answered = true;
      readAnswer(answer, signal).then(
        (response) => {
          done();
          resolve(response);
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
    });
    request.end(body);
  });
}

/** A keep-alive socket the server closed while it sat idle: the request never reached it. */
function closedWhileIdle(request: ClientRequest, error: NodeJS.ErrnoException): boolean {
  return request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
}

function readAnswer(answer: IncomingMessage, signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.on('end', () => {
      try {
        resolve(responseOf(answer, Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    const fail = () =>
      reject(
        signal?.aborted === true
          ? signal.reason
          : new TypeError('fetch failed: the answer ended early'),
      );
    answer.on('error', fail);
    answer.on('aborted', fail);
  });
}

function responseOf(answer: IncomingMessage, raw: Buffer): Response {
  const status = answer.statusCode ?? 0;
  const headers = new Headers();
  const { rawHeaders } = answer;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    headers.append(rawHeaders[index] as string, rawHeaders[index + 1] as string);
  }
  const nullBody = status === 204 || status === 304 || answer.method === 'HEAD';
  return bufferedResponse(nullBody ? null : decoded(raw, answer.headers['content-encoding']), {
    status,
    statusText: answer.statusMessage ?? '',
    headers,
  });
}

/**
 * The WHATWG Response as a base class. The DOM types declare its members as properties, which
 * a subclass cannot implement as methods and accessors; at run time they are on its prototype.
 */
const ResponseBase: new (body: null, init: ResponseInit) => object = Response;

/**
 * A Response whose body is already in memory. `text()`, `json()` and `arrayBuffer()` read the
 * buffer straight away; the body stream that a Response made from bytes builds (and every read
 * goes through) is made only when someone asks for `body`. It is a Response (instanceof, the
 * status, headers, `clone()`), read once like any other.
 */
class BufferedResponse extends ResponseBase {
  readonly #bytes: Buffer | null;
  #read = false;
  /** A Response made from the bytes when a reader asks for `body`, which gives its stream. */
  #streamed: Response | undefined;

  constructor(bytes: Buffer | null, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  get bodyUsed(): boolean {
    return this.#read || (this.#streamed?.bodyUsed ?? false);
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#bytes === null) return null;
    this.#streamed ??= new Response(this.#bytes);
    return this.#streamed.body;
  }

  async text(): Promise<string> {
    return this.#take().toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(this.#take().toString('utf8')) as unknown;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.#take()).buffer;
  }

  /** The readers nobody here uses, read as fetch's from the bytes. */
  async blob(): Promise<Blob> {
    return this.#takeAsResponse().blob();
  }

  async formData(): Promise<FormData> {
    return this.#takeAsResponse().formData();
  }

  clone(): Response {
    if (this.#unusable()) throw new TypeError('Response.clone: the body has already been read');
    const self = this as unknown as Response;
    return bufferedResponse(this.#bytes, {
      status: self.status,
      statusText: self.statusText,
      headers: self.headers,
    });
  }

  /** As fetch's: a body read, or a stream read from or locked to a reader, is unusable. */
  #unusable(): boolean {
    return this.bodyUsed || (this.#streamed?.body?.locked ?? false);
  }

  #takeAsResponse(): Response {
    return new Response(this.#take(), { headers: (this as unknown as Response).headers });
  }

  #take(): Buffer {
    if (this.#unusable()) throw new TypeError('Body is unusable: the body has already been read');
    this.#read = true;
    return this.#bytes ?? Buffer.alloc(0);
  }
}

function bufferedResponse(bytes: Buffer | null, init: ResponseInit): Response {
  return new BufferedResponse(bytes, init) as unknown as Response;
}

/** The body as fetch gives it: gzip, deflate and br decoded. */
function decoded(raw: Buffer, contentEncoding: string | undefined): Buffer {
  const coding = contentEncoding?.trim().toLowerCase();
  if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(raw);
  if (coding === 'deflate') return inflateSync(raw);
  if (coding === 'br') return brotliDecompressSync(raw);
  return raw;
}
