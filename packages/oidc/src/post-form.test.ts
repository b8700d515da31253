import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { formPostChannel, postForm } from './post-form.js';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let handler: Handler = (_request, _body, response) => response.end('{}');
let connections = 0;
const sockets = new Set<Socket>();
const server: Server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => handler(request, Buffer.concat(chunks).toString(), response));
});
server.on('connection', (socket) => {
  connections += 1;
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
const listening = new Promise<string>((resolve) =>
  server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/token`),
  ),
);

afterEach(() => {
  handler = (_request, _body, response) => response.end('{}');
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const form = { grant_type: 'authorization_code', code: 'a b&c', redirect_uri: 'http://x/cb' };

describe('postForm (node:http with a keep-alive agent)', () => {
  it('posts the form with the given headers, reads the JSON answer and reuses the connection', async () => {
    const url = await listening;
    const seen: Array<{ headers: IncomingMessage['headers']; body: string; method?: string }> = [];
    handler = (request, body, response) => {
      seen.push({ headers: request.headers, body, method: request.method });
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ id_token: 'x.y.z', n: seen.length }));
    };
    const before = connections;
    const published: unknown[] = [];
    const observe = (message: unknown) => published.push(message);
    formPostChannel.subscribe(observe);
    const first = await postForm(url, form, { authorization: 'Basic abc' }, 2_000);
    formPostChannel.unsubscribe(observe);
    const second = await postForm(url, form, { authorization: 'Basic abc' }, 2_000);
    expect(published).toEqual([{ url, form, result: first }]);
    expect(first).toEqual({ answered: true, status: 200, body: { id_token: 'x.y.z', n: 1 } });
    expect(second).toEqual({ answered: true, status: 200, body: { id_token: 'x.y.z', n: 2 } });
    expect(connections - before).toBe(1);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.headers.authorization).toBe('Basic abc');
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(seen[0]?.body))).toEqual(form);
  });

  it('answers the status with an undefined body when the answer is not JSON, and follows no redirect', async () => {
    const url = await listening;
    handler = (_request, _body, response) => {
      response.writeHead(302, { location: '/elsewhere' });
      response.end('<html>moved</html>');
    };
    expect(await postForm(url, form, {}, 2_000)).toEqual({
      answered: true,
      status: 302,
      body: undefined,
    });
    handler = (_request, _body, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end('\uFEFF{"error":"invalid_grant"}');
    };
    expect(await postForm(url, form, {}, 2_000)).toEqual({
      answered: true,
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('decodes a gzip body a server sent unasked', async () => {
    const url = await listening;
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end(gzipSync(JSON.stringify({ id_token: 'a.b.c' })));
    };
    expect(await postForm(url, form, {}, 2_000)).toEqual({
      answered: true,
      status: 200,
      body: { id_token: 'a.b.c' },
    });
  });

  it('gives up at the time-out when no headers come (no answer) or the body stalls (no body)', async () => {
    const url = await listening;
    handler = () => undefined;
    const started = Date.now();
    const silent = await postForm(url, form, {}, 200);
    expect(silent.answered).toBe(false);
    expect(silent.answered === false && (silent.cause as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"id_token":');
    };
    // The body never ends: only the time-out ends the read.
    expect(await postForm(url, form, {}, 200)).toEqual({
      answered: true,
      status: 200,
      body: undefined,
    });
  });

  it('reports an unreachable endpoint and a URL it cannot call as no answer', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    expect((await postForm(`http://127.0.0.1:${port}/token`, form, {}, 2_000)).answered).toBe(
      false,
    );
    expect((await postForm('not a url', form, {}, 2_000)).answered).toBe(false);
    expect((await postForm('ftp://127.0.0.1/token', form, {}, 2_000)).answered).toBe(false);
  });

  /**
   * A provider that keeps connections open without a Keep-Alive hint and resets each one at
   * its second request, as one that closed it idle just as the request went out.
   */
  async function startResettingProvider() {
    const counts = { accepted: 0, reset: 0 };
    const open = new Set<Socket>();
    const raw = createNetServer((socket) => {
      counts.accepted += 1;
      open.add(socket);
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        if (requests > 1) {
          counts.reset += 1;
          socket.resetAndDestroy();
          return;
        }
        const body = '{"ok":true}';
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/token`,
      counts,
      close: async () => {
        for (const socket of open) socket.destroy();
        await new Promise((resolve) => raw.close(resolve));
      },
    };
  }
  const ok = { answered: true, status: 200, body: { ok: true } };

  it('retries once on a fresh connection when a kept-alive one was closed by the provider', async () => {
    const provider = await startResettingProvider();
    try {
      expect(await postForm(provider.url, form, {}, 2_000)).toEqual(ok);
      expect(await postForm(provider.url, form, {}, 2_000)).toEqual(ok);
      expect(provider.counts).toEqual({ accepted: 2, reset: 1 });
    } finally {
      await provider.close();
    }
  });

  it('retries on a connection of its own, not on another kept-alive one, which the provider most likely closed too', async () => {
    // Connections used together go idle together and are closed together: when the most
    // recently used one turns out closed, so have the others. Here two sit idle in the pool
    // when the third POST goes out.
    const provider = await startResettingProvider();
    try {
      const post = () => postForm(provider.url, form, {}, 2_000);
      expect(await Promise.all([post(), post()])).toEqual([ok, ok]);
      expect(provider.counts.accepted).toBe(2);

      expect(await post()).toEqual(ok);
      // One kept-alive connection was tried and reset, then one new connection answered.
      expect(provider.counts).toEqual({ accepted: 3, reset: 1 });
    } finally {
      await provider.close();
    }
  });
});
