import diagnosticsChannel from 'node:diagnostics_channel';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * Connections to identity providers are kept open between requests (one pool per process).
 * An idle connection is closed a second before the provider's announced `Keep-Alive: timeout`
 * (Node's agent reads the hint); a reused connection the provider closed anyway is retried
 * once on a new connection of its own, outside the pool (below).
 */
const agents = {
  'http:': new HttpAgent({ keepAlive: true, scheduling: 'lifo' }),
  'https:': new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }),
};

/**
 * Every form POST and its outcome, `{ url, form, result }`, for in-process observers (tests
 * that check no secret of the exchange leaks into logs and spans). Nothing is built unless
 * someone subscribes.
 */
export const formPostChannel = diagnosticsChannel.channel('gateway:oidc.form-post');

/** The outcome of one form POST. */
export type FormPostResult =
  /** No answer: unreachable, refused, reset, or no headers within the time-out. */
  | { answered: false; cause: unknown }
  /**
   * An answer. `body` is the parsed JSON body, or undefined when it was not JSON or could not
   * be read in full within the time-out.
   */
  | { answered: true; status: number; body: unknown };

/**
 * POSTs an `application/x-www-form-urlencoded` body and reads a JSON answer, all within
 * `timeoutMs` (connection, headers and body together), with node:http(s) and a keep-alive
 * agent: undici's `fetch` costs several times the CPU per request. Redirects are not
 * followed (a 3xx is an answer like any other). Never throws.
 */
export function postForm(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<FormPostResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch (cause) {
    return Promise.resolve({ answered: false, cause });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.resolve({
      answered: false,
      cause: new TypeError(`Unsupported protocol ${target.protocol}`),
    });
  }
  const body = new URLSearchParams(form).toString();
  const deadline = Date.now() + timeoutMs;
  const sent = send(target, body, headers, deadline, true);
  if (!formPostChannel.hasSubscribers) return sent;
  return sent.then((result) => {
    formPostChannel.publish({ url, form, result });
    return result;
  });
}

function send(
  target: URL,
  body: string,
  headers: Record<string, string>,
  deadline: number,
  pooled: boolean,
): Promise<FormPostResult> {
  return new Promise((resolve) => {
    const request = formRequest(target, body, headers, pooled);
    let settled = false;
    let response: IncomingMessage | undefined;
    const timer = setTimeout(
      () => {
        const error = new Error(`No answer within the time-out`);
        error.name = 'TimeoutError';
        request.destroy(error);
      },
      Math.max(0, deadline - Date.now()),
    );
    const settle = (result: FormPostResult | Promise<FormPostResult>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    request.on('error', (cause: NodeJS.ErrnoException) => {
      if (settled) return;
      if (response !== undefined) {
        settle({ answered: true, status: response.statusCode ?? 0, body: undefined });
      } else if (pooled && closedWhileIdle(request, cause, deadline)) {
        settle(send(target, body, headers, deadline, false));
      } else {
        settle({ answered: false, cause });
      }
    });
    request.on('response', (answer) => {
      response = answer;
      readAnswer(answer, settle);
    });
    request.end(body);
  });
}

/** The POST request, on a pooled connection or (`pooled` false) on a new one of its own. */
function formRequest(
  target: URL,
  body: string,
  headers: Record<string, string>,
  pooled: boolean,
): ClientRequest {
  const protocol = target.protocol as 'http:' | 'https:';
  return (protocol === 'https:' ? httpsRequest : httpRequest)(target, {
    method: 'POST',
    agent: pooled ? agents[protocol] : false,
    headers: {
      ...headers,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
  });
}

/**
 * Whether a pooled request failed on a kept-alive connection the provider closed while it sat
 * idle: nothing was processed, so it is sent again, once, on a new connection (`agent:
 * false`). Not on the pool's next idle connection: connections used together go idle
 * together and a provider (or a proxy before it) closes them together, so when the most
 * recently used one turned out closed, the others most likely are too. It happens with a
 * provider or proxy that announces no keep-alive time-out, or when a loaded event loop runs
 * the agent's own close (a second before the announced one) late.
 */
function closedWhileIdle(
  request: ClientRequest,
  cause: NodeJS.ErrnoException,
  deadline: number,
): boolean {
  return (
    request.reusedSocket &&
    (cause.code === 'ECONNRESET' || cause.code === 'EPIPE') &&
    Date.now() < deadline
  );
}

/** Reads the answer's body; one that fails or is cut off still answers its status. */
function readAnswer(answer: IncomingMessage, settle: (result: FormPostResult) => void): void {
  const chunks: Buffer[] = [];
  answer.on('data', (chunk: Buffer) => chunks.push(chunk));
  answer.on('end', () => {
    settle({
      answered: true,
      status: answer.statusCode ?? 0,
      body: parseJson(Buffer.concat(chunks), answer.headers['content-encoding']),
    });
  });
  answer.on('error', () =>
    settle({ answered: true, status: answer.statusCode ?? 0, body: undefined }),
  );
  answer.on('aborted', () =>
    settle({ answered: true, status: answer.statusCode ?? 0, body: undefined }),
  );
}

/** The body as JSON (after any content coding a server applied unasked), else undefined. */
function parseJson(raw: Buffer, contentEncoding: string | undefined): unknown {
  try {
    let bytes = raw;
    const coding = contentEncoding?.trim().toLowerCase();
    if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(raw);
    else if (coding === 'deflate') bytes = inflateSync(raw);
    else if (coding === 'br') bytes = brotliDecompressSync(raw);
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
