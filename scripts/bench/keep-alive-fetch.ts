import { Agent, request } from 'node:http';

// The bench's sign-ins seed S2's handoff codes, tens of thousands per level, and on two shared
// cores the client's own CPU is taken from the gateway and the identity provider. The global
// fetch (undici) costs several times a node:http request, so seeding uses this: the subset of
// fetch that sign-ins need (GET/POST, string or form bodies, manual redirects, plain http)
// over keep-alive sockets, answering a standard Response.

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

// Statuses whose Response must have no body.
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export const keepAliveFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.protocol !== 'http:') throw new TypeError(`keepAliveFetch: only http: (${url.protocol})`);
  if (init?.redirect !== undefined && init.redirect !== 'manual') {
    throw new TypeError('keepAliveFetch: only redirect: manual');
  }
  const body = init?.body;
  if (
    body !== undefined &&
    body !== null &&
    typeof body !== 'string' &&
    !(body instanceof URLSearchParams)
  ) {
    throw new TypeError('keepAliveFetch: only string or form bodies');
  }
  const payload = body === undefined || body === null ? undefined : String(body);
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  if (payload !== undefined) {
    headers['content-length'] = String(Buffer.byteLength(payload));
    if (body instanceof URLSearchParams) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    }
  }
  return new Promise<Response>((resolve, reject) => {
    const outgoing = request(url, { method: init?.method ?? 'GET', headers, agent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const status = incoming.statusCode ?? 0;
        const answerHeaders = new Headers();
        const raw = incoming.rawHeaders;
        for (let index = 0; index + 1 < raw.length; index += 2) {
          answerHeaders.append(raw[index] as string, raw[index + 1] as string);
        }
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(
          new Response(NULL_BODY.has(status) ? null : text, {
            status,
            headers: answerHeaders,
          }),
        );
      });
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
};
