import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keepAliveFetch } from './keep-alive-fetch.js';

// The bench's sign-ins reuse idle kept-alive sockets, and the identity provider closes idle
// ones after Node's 5 s. Sockets used together go idle together, so when one of them turns out
// closed, the next idle one usually is too. This server stands in for that moment: every
// connection answers its first request and then hangs up on the next one, unread, as a server
// closing an idle socket just as a request arrives does.
describe('keepAliveFetch', () => {
  let server: Server;
  let url = '';
  const connections: Socket[] = [];
  let hungUp = 0;
  beforeAll(async () => {
    const served = new WeakSet<Socket>();
    server = createServer((req, res) => {
      const { socket } = req;
      if (served.has(socket)) {
        hungUp += 1;
        socket.destroy();
        return;
      }
      served.add(socket);
      res.end('answered');
    });
    server.on('connection', (socket: Socket) => connections.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends a request again on a new connection when idle kept-alive sockets turn out closed', async () => {
    // Three requests at once leave three idle sockets in the pool, each of which will hang up.
    const first = await Promise.all([url, url, url].map((target) => keepAliveFetch(target)));
    expect(first.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const opened = connections.length;

    const again = await keepAliveFetch(url);

    expect(again.status).toBe(200);
    await expect(again.text()).resolves.toBe('answered');
    // The request went out on a kept-alive socket that hung up, then on a new connection.
    expect(hungUp).toBe(1);
    expect(connections.length).toBe(opened + 1);
  });

  it('does not send a request again when its connection was new', async () => {
    const refusing = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const port = (refusing.address() as AddressInfo).port;
    let requests = 0;
    refusing.on('request', () => (requests += 1));
    try {
      await expect(keepAliveFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow('socket hang up');
      expect(requests).toBe(1);
    } finally {
      refusing.closeAllConnections();
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
