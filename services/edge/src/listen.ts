import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientError, answerUnmetExpectation, refusedForHost } from './http/client-errors.js';

export type ListeningServer = { port: number; server: Server; close(): Promise<void> };

/** How long a client may take to send a request, and how often that is checked. */
export type RequestDeadlines = {
  /** From a request's first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body. */
  requestTimeoutMs: number;
  /** How often node looks for requests past these deadlines. */
  checkIntervalMs: number;
};

const DEFAULT_DEADLINES: RequestDeadlines = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 1_000,
};

/**
 * Listens on `port` (0 picks a free one, as tests do) on every interface, IPv4 and IPv6.
 * `close` stops accepting connections, lets in-flight requests finish and closes idle
 * keep-alive connections, so SIGTERM drains instead of cutting requests.
 */
export async function listen(
  app: RequestListener,
  port: number,
  host?: string,
  deadlines: Partial<RequestDeadlines> = {},
): Promise<ListeningServer> {
  const { headersTimeoutMs, requestTimeoutMs, checkIntervalMs } = {
    ...DEFAULT_DEADLINES,
    ...deadlines,
  };
  // Every refusal is answered with the JSON error body (http/client-errors.ts): node's own
  // answers to a malformed request, to headers too large or too slow, and to an unknown
  // Expect carry none, and it answers a request without Host before any listener runs.
  const server = createServer(
    { requireHostHeader: false, connectionsCheckingInterval: checkIntervalMs },
    (req, res) => {
      if (!refusedForHost(req, res)) app(req, res);
    },
  );
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.keepAliveTimeout = 65_000;
  // A client that never finishes its headers gets 408 after this (the body has its own,
  // shorter deadline in the operation runner).
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
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
