import { Agent, request } from 'node:http';
import type { ProviderPageFetch } from '@gateway/testkit';

// The bench's sign-ins seed S2's handoff codes, tens of thousands per level, and on two shared
// cores the client's own CPU is taken from the gateway and the identity provider. The global
// fetch (undici, with its Headers, Response and web streams) costs several times a node:http
// request, so sign-ins use this: what they need of fetch (GET/POST, string or form bodies,
// manual redirects, plain http) over keep-alive sockets, answering a small object with the
// parts of a Response they read.

const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const ANSWER_TIMEOUT_MS = 30_000;

export type KeepAliveAnswer = Awaited<ReturnType<ProviderPageFetch>> & {
  json(): Promise<unknown>;
};

export function keepAliveFetch(
  url: string,
  init: {
    method?: string;
    redirect?: 'manual';
    headers?: Record<string, string>;
    body?: string | URLSearchParams | undefined;
  } = {},
): Promise<KeepAliveAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:') {
    return Promise.reject(new TypeError(`keepAliveFetch: only http: (${target.protocol})`));
  }
  const { body } = init;
  const payload = body === undefined ? undefined : String(body);
  const headers: Record<string, string> = { ...init.headers };
  if (payload !== undefined) {
    headers['content-length'] = String(Buffer.byteLength(payload));
    if (body instanceof URLSearchParams) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    }
  }
  return send(target, init.method ?? 'GET', headers, payload, agent);
}

function send(
  target: URL,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
  via: Agent | false,
): Promise<KeepAliveAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(target, { method, headers, agent: via }, (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const { headers: answer } = incoming;
        resolve({
          status: incoming.statusCode ?? 0,
          headers: {
            get: (name) => {
              const value = answer[name.toLowerCase()];
              if (value === undefined) return null;
              return Array.isArray(value) ? value.join(', ') : value;
            },
            getSetCookie: () => answer['set-cookie'] ?? [],
          },
          text: () => Promise.resolve(text),
          json: () => Promise.resolve(JSON.parse(text) as unknown),
          body: { cancel: () => Promise.resolve() },
        });
      });
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // An idle kept-alive socket the server closed (the identity provider's keep-alive is
      // Node's 5 s) just as this request went out: like a browser, send it again once, on a
      // new connection of its own (`agent: false`). Not on the pool's next idle socket: the
      // sockets a burst of sign-ins used went idle together and are closed together, so that
      // one had most likely hung up too. Once an answer has begun, the server did read the
      // request: never again.
      if (
        via !== false &&
        !answered &&
        outgoing.reusedSocket &&
        (error.code === 'ECONNRESET' || error.code === 'EPIPE')
      ) {
        resolve(send(target, method, headers, payload, false));
        return;
      }
      reject(error);
    });
    // A stalled answer fails its sign-in instead of hanging the bench.
    outgoing.setTimeout(ANSWER_TIMEOUT_MS, () =>
      outgoing.destroy(new Error(`No answer within ${ANSWER_TIMEOUT_MS} ms from ${target.href}`)),
    );
    outgoing.end(payload);
  });
}
