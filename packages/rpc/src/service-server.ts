import { createServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { ServiceRoutes } from './service-implementations.js';

export type ServiceServer = { url: string; port: number; close(): Promise<void> };

/**
 * Serves a service's routes over cleartext HTTP/2 (split mode) with connect-node, which
 * speaks the Connect protocol, gRPC and gRPC-Web alike. Only a service's `main` calls this;
 * tests listen on port 0.
 */
export async function startServiceServer(options: {
  routes: ServiceRoutes;
  interceptors: Interceptor[];
  port: number;
  host?: string;
}): Promise<ServiceServer> {
  const server = createServer(
    connectNodeAdapter({ routes: options.routes, interceptors: options.interceptors }),
  );
  // Callers keep one session open; closing waits for those, so close tells them to go away.
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Stop taking new sessions; calls in flight finish, then their sessions close.
        server.close(() => resolve());
        for (const session of sessions) session.close();
      }),
  };
}
