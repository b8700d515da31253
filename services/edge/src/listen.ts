import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export type ListeningServer = { port: number; server: Server; close(): Promise<void> };

/**
 * Listens on `port` (0 picks a free one, as tests do) on every interface, IPv4 and IPv6.
 * `close` stops accepting connections, lets in-flight requests finish and closes idle
 * keep-alive connections, so SIGTERM drains instead of cutting requests.
 */
export async function listen(
  app: RequestListener,
  port: number,
  host?: string,
): Promise<ListeningServer> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  // SIGTERM drains: a keep-alive connection whose request was in flight at close
  // goes idle when its response ends; close it then, instead of waiting for the client to
  // drop it (or for the shutdown grace timer to exit 1).
  let closing = false;
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', () => {
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeIdleConnections();
      }),
  };
}
