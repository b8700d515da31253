import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type TcpProxy = {
  /** Port on 127.0.0.1 that forwards to the target while the proxy is up. */
  port: number;
  /** Cuts the link: open connections are destroyed and new ones are refused. */
  cut(): Promise<void>;
  /**
   * Stalls the link: connections stay open and new ones are accepted, but no byte
   * goes through either way, as with a dependency that hangs. `restore` ends the stall by
   * dropping every held connection.
   */
  stall(): Promise<void>;
  /** Accepts connections again on the same port (after `cut`), or ends a `stall`. */
  restore(): Promise<void>;
  close(): Promise<void>;
};

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis, a service), so a test can take the
 * dependency away from the gateway and give it back, without stopping the shared server.
 * `onConnection` sees each client connection it forwards (to read what the client sends, say).
 */
export async function startTcpProxy(
  target: { host: string; port: number },
  options: { onConnection?: (client: Socket) => void } = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let stalled = false;

  const listen = async (): Promise<void> => {
    const next = createServer((client) => {
      if (stalled) {
        sockets.add(client);
        client.pause();
        client.on('error', () => client.destroy());
        client.on('close', () => sockets.delete(client));
        return;
      }
      const upstream = createConnection(target);
      sockets.add(client);
      sockets.add(upstream);
      const forget = () => {
        sockets.delete(client);
        sockets.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', forget).on('close', forget);
      upstream.on('error', forget).on('close', forget);
      options.onConnection?.(client);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    port = (next.address() as AddressInfo).port;
    server = next;
  };
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const stop = async (): Promise<void> => {
    stalled = false;
    const current = server;
    server = undefined;
    dropAll();
    if (current !== undefined) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    stall: () => {
      stalled = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
      return Promise.resolve();
    },
    restore: async () => {
      if (server === undefined) return listen();
      if (stalled) {
        stalled = false;
        dropAll();
      }
    },
    close: stop,
  };
}
