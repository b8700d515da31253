import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nodeHttpFetch } from './node-http-fetch.js';

type Seen = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

describe('nodeHttpFetch (the fetch openid-client and jose are given)', () => {
  let server: Server;
  let origin: string;
  const seen: Seen[] = [];
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/json': (res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    },
    '/gzip': (res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync('{"zipped":true}'));
    },
    '/redirect': (res) => {
      res.statusCode = 302;
      res.setHeader('location', '/json');
      res.end();
    },
    '/empty': (res) => {
      res.statusCode = 204;
      res.end();
    },
    '/silent': () => undefined,
    '/cut': (res) => {
      res.setHeader('content-length', '100');
      res.write('{"partial":');
      res.socket?.destroy();
    },
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        (routes[req.url ?? ''] ?? routes['/json'])?.(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a Response with the status, headers and JSON body', async () => {
    const response = await nodeHttpFetch(`${origin}/json`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', headers: { accept: 'application/json' } });
  });

  it('answers a Response whose body is read once, by any of its readers', async () => {
    const response = await nodeHttpFetch(`${origin}/json`);
    expect(response).toBeInstanceOf(Response);
    expect(response.bodyUsed).toBe(false);
    const copy = response.clone();
    expect(copy).toBeInstanceOf(Response);
    expect(copy.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('{"ok":true}');
    expect(response.bodyUsed).toBe(true);
    await expect(response.json()).rejects.toThrow(TypeError);
    expect(() => response.clone()).toThrow(TypeError);
    expect(new TextDecoder().decode(await copy.arrayBuffer())).toBe('{"ok":true}');
    const blob = await (await nodeHttpFetch(`${origin}/json`)).blob();
    expect({ type: blob.type, text: await blob.text() }).toEqual({
      type: 'application/json',
      text: '{"ok":true}',
    });
  });

  it('gives the body as a stream to a reader that asks for one', async () => {
    const response = await nodeHttpFetch(`${origin}/json`);
    const reader = response.body?.getReader();
    expect(() => response.clone()).toThrow(TypeError);
    let text = '';
    for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done;) {
      text += new TextDecoder().decode(chunk.value);
      chunk = await reader?.read();
    }
    expect(text).toBe('{"ok":true}');
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('posts a URLSearchParams body as a form, with its length', async () => {
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: 'a b' });
    const response = await nodeHttpFetch(`${origin}/json`, {
      method: 'POST',
      headers: new Headers({ authorization: 'Basic eDp5' }),
      body: form,
    });
    expect(response.status).toBe(200);
    const request = seen.at(-1);
    expect(request).toMatchObject({
      method: 'POST',
      body: 'grant_type=authorization_code&code=a+b',
      headers: {
        authorization: 'Basic eDp5',
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        'content-length': String('grant_type=authorization_code&code=a+b'.length),
      },
    });
  });

  it('decodes a gzip body, as fetch does', async () => {
    const response = await nodeHttpFetch(`${origin}/gzip`);
    expect(await response.json()).toEqual({ zipped: true });
  });

  it('answers a redirect as it is, without following it', async () => {
    const response = await nodeHttpFetch(`${origin}/redirect`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/json');
  });

  it('answers a 204 with no body', async () => {
    const response = await nodeHttpFetch(`${origin}/empty`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it("rejects with the signal's reason when the signal ends the wait", async () => {
    await expect(
      nodeHttpFetch(`${origin}/silent`, { signal: AbortSignal.timeout(200) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('rejects at once on a signal that already ended, sending nothing', async () => {
    const before = seen.length;
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(nodeHttpFetch(`${origin}/json`, { signal: controller.signal })).rejects.toThrow(
      'gone',
    );
    expect(seen.length).toBe(before);
  });

  it('rejects as fetch does when nothing listens or the answer is cut short', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(nodeHttpFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow('fetch failed');
    await expect(nodeHttpFetch(`${origin}/cut`)).rejects.toThrow('fetch failed');
  });

  it('reuses a kept-alive socket, and a new one after the server closed it while idle', async () => {
    await nodeHttpFetch(`${origin}/json`);
    server.closeIdleConnections();
    const response = await nodeHttpFetch(`${origin}/json`);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('refuses other protocols and bodies it cannot send', async () => {
    await expect(nodeHttpFetch('ftp://127.0.0.1/')).rejects.toThrow('unsupported protocol');
    await expect(
      nodeHttpFetch(`${origin}/json`, { method: 'POST', body: new Blob(['x']) }),
    ).rejects.toThrow('only string and URLSearchParams');
  });
});
