import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fromBinary, toBinary, type DescMethod } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type UnaryRequest,
} from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import type { ServiceRoutes } from './service-routes.js';
import { chainUnary, NEVER_ABORTED, type UnaryCall } from './unary-chain.js';
import { createUnaryDispatcher } from './unary-dispatcher.js';

export type RpcServer = { url: string; port: number; close(): Promise<void> };

/** A Connect unary call in the binary format: what services call each other with. */
function isConnectUnaryProto(req: Http2ServerRequest): boolean {
  return (
    req.method === 'POST' &&
    req.headers['content-type'] === 'application/proto' &&
    req.headers['connect-protocol-version'] === '1' &&
    req.headers['content-encoding'] === undefined
  );
}

/**
 * Issue 8: a Connect unary call in the binary format, answered without connect-node's
 * universal handler (several AbortControllers, web Headers and async iterables per call):
 * the message is decoded, passed through the service interceptors to the implementation, and
 * the answer or the error written as the Connect protocol has it (200 with the message; the
 * error's HTTP status with its JSON body, details included). Everything else (gRPC,
 * gRPC-Web, JSON, GET, compression) goes to connect-node as before.
 */
async function serveUnary(
  call: UnaryCall,
  method: DescMethod,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): Promise<void> {
  if (method.methodKind !== 'unary') throw new Error('only unary methods are served here');
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let message;
    try {
      message = fromBinary(method.input, Buffer.concat(chunks));
    } catch (error) {
      throw new ConnectError(
        'the request message cannot be read',
        Code.InvalidArgument,
        undefined,
        undefined,
        error,
      );
    }
    const header = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith(':') || value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) header.append(name, item);
    }
    const answer = await call({
      stream: false,
      service: method.parent,
      method,
      requestMethod: 'POST',
      url: req.url,
      signal: NEVER_ABORTED,
      header,
      contextValues: createContextValues(),
      message,
    } as UnaryRequest);
    const body = toBinary(method.output, answer.message);
    const headers: Record<string, string> = {
      'content-type': 'application/proto',
      'content-length': String(body.byteLength),
    };
    answer.header.forEach((value, name) => (headers[name] = value));
    answer.trailer.forEach((value, name) => (headers[`trailer-${name}`] = value));
    res.writeHead(200, headers);
    res.end(body);
  } catch (thrown) {
    if (res.headersSent) {
      res.stream.close();
      return;
    }
    const error = ConnectError.from(thrown);
    const body = errorToJsonBytes(error, {});
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(body.byteLength),
    };
    error.metadata.forEach((value, name) => (headers[name] = value));
    res.writeHead(codeToHttpStatus(error.code), headers);
    res.end(body);
  }
}

/**
 * Serves Connect, gRPC and gRPC-Web over cleartext HTTP/2 (split mode). Only a service's
 * `main` calls this; tests listen on port 0.
 */
export async function startRpcServer(options: {
  routes: ServiceRoutes;
  interceptors: Interceptor[];
  port: number;
  host?: string;
}): Promise<RpcServer> {
  const adapter = connectNodeAdapter({
    routes: options.routes,
    interceptors: options.interceptors,
  });
  const dispatcher = createUnaryDispatcher(options.routes);
  const call = chainUnary(dispatcher.call, options.interceptors);
  const server: Http2Server = createServer((req, res) => {
    const method = isConnectUnaryProto(req) ? dispatcher.methodAt(req.url) : undefined;
    if (method === undefined) {
      adapter(req, res);
      return;
    }
    void serveUnary(call, method, req, res);
  });
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
        // Stop taking new streams; let in-flight ones finish, then close the sessions.
        server.close(() => resolve());
        for (const session of sessions) session.close();
      }),
  };
}
