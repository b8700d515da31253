// A real node:http server that runs Express-style middleware in order, for tests of this
// package (express itself is a dependency of the edge, not of telemetry). Like Express it
// sets `req.originalUrl`, `res.locals`, and `req.route` / `req.baseUrl` when a route matches.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';

export interface TestRoute {
  method: string;
  /** Express-style path; `:name` segments match one segment. */
  path: string;
  handler: (req: Request, res: Response) => void | Promise<void>;
}

export interface MiddlewareServer {
  readonly url: string;
  close(): Promise<void>;
}

function matches(route: TestRoute, method: string, path: string): boolean {
  if (route.method !== method) return false;
  const pattern = route.path.replace(/:[A-Za-z]+/g, '[^/]+');
  return new RegExp(`^${pattern}$`).test(path);
}

function fail(outgoing: ServerResponse): void {
  if (outgoing.headersSent) {
    outgoing.destroy();
    return;
  }
  outgoing.statusCode = 500;
  outgoing.end();
}

/** Like Express, each layer's `next` runs the following layer synchronously, in its context. */
function handle(
  middleware: RequestHandler[],
  routes: TestRoute[],
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): void {
  const req = incoming as unknown as Request;
  const res = outgoing as unknown as Response;
  Object.assign(req, { originalUrl: incoming.url, baseUrl: '' });
  Object.assign(res, { locals: {} });

  const runRoute = (): void => {
    const path = (incoming.url ?? '/').split('?')[0] ?? '/';
    const route = routes.find((candidate) => matches(candidate, incoming.method ?? '', path));
    if (!route) {
      outgoing.statusCode = 404;
      outgoing.end();
      return;
    }
    Object.assign(req, { route: { path: route.path } });
    Promise.resolve()
      .then(() => route.handler(req, res))
      .catch(() => fail(outgoing));
  };

  const dispatch = (index: number): void => {
    const layer = middleware[index];
    if (!layer) {
      runRoute();
      return;
    }
    layer(req, res, (error?: unknown) => (error ? fail(outgoing) : dispatch(index + 1)));
  };
  dispatch(0);
}

export async function startMiddlewareServer(
  middleware: RequestHandler[],
  routes: TestRoute[],
): Promise<MiddlewareServer> {
  const server: Server = createServer((incoming, outgoing) => {
    handle(middleware, routes, incoming, outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
