import {
  constants,
  createServer,
  Http2ServerRequest,
  Http2ServerResponse,
  type Http2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
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
import { chainUnary, copyHttp2Headers, NEVER_ABORTED, type UnaryCall } from './unary-chain.js';
import { createUnaryDispatcher } from './unary-dispatcher.js';

export type RpcServer = { url: string; port: number; close(): Promise<void> };

/** A Connect unary call in the binary format: what services call each other with. */
function isConnectUnaryProto(headers: IncomingHttpHeaders): boolean {
  return (
    headers[constants.HTTP2_HEADER_METHOD] === 'POST' &&
    headers['content-type'] === 'application/proto' &&
    headers['connect-protocol-version'] === '1' &&
    headers['content-encoding'] === undefined
  );
}

/** Errors of a stream are its end, not the process's (as in node's compatibility layer). */
function ignoreStreamError(): void {}

function sendNoTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers({});
}

/**
 * Writes an answer as node's compatibility layer does: headers, the body, then an empty frame
 * that ends the stream (`waitForTrailers`). Ending the stream with the body's own frame lets
 * it close before its write completes, and node then builds an ERR_STREAM_DESTROYED (stack
 * trace included) for every answer.
 */
function respond(stream: ServerHttp2Stream, headers: OutgoingHttpHeaders, body: Uint8Array): void {
  stream.respond(headers, { waitForTrailers: true });
  stream.once('wantTrailers', sendNoTrailers);
  stream.end(body);
}

/**
 * Issue 8: a Connect unary call in the binary format, answered on the HTTP/2 stream itself,
 * without connect-node's universal handler (several AbortControllers, web Headers and async
 * iterables per call) and without node's request/response compatibility objects: the message
 * is decoded, passed through the service interceptors to the implementation, and the answer
 * or the error written as the Connect protocol has it (200 with the message; the error's HTTP
 * status with its JSON body, details included). Everything else (gRPC, gRPC-Web, JSON, GET,
 * compression) goes to connect-node as before. A stream that ends before its request does
 * (the caller cancelled it) gets no answer.
 */
function serveUnary(
  call: UnaryCall,
  method: DescMethod,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
): void {
  const chunks: Buffer[] = [];
  stream.on('error', ignoreStreamError);
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.once('end', () => {
    void answerUnary(call, method, stream, headers, chunks);
  });
}

async function answerUnary(
  call: UnaryCall,
  method: DescMethod,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  chunks: Buffer[],
): Promise<void> {
  try {
    let message;
    try {
      message = fromBinary(
        method.input,
        chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
      );
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
    copyHttp2Headers(headers, header);
    const answer = await call({
      stream: false,
      service: method.parent,
      method,
      requestMethod: 'POST',
      url: headers[constants.HTTP2_HEADER_PATH] as string,
      signal: NEVER_ABORTED,
      header,
      contextValues: createContextValues(),
      message,
    } as UnaryRequest);
    const body = toBinary(method.output, answer.message);
    const answerHeaders: OutgoingHttpHeaders = {
      [constants.HTTP2_HEADER_STATUS]: 200,
      'content-type': 'application/proto',
      'content-length': body.byteLength,
    };
    answer.header.forEach((value, name) => (answerHeaders[name] = value));
    answer.trailer.forEach((value, name) => (answerHeaders[`trailer-${name}`] = value));
    if (stream.destroyed || stream.closed) return;
    respond(stream, answerHeaders, body);
  } catch (thrown) {
    if (stream.destroyed || stream.closed) return;
    if (stream.headersSent) {
      stream.close();
      return;
    }
    const error = ConnectError.from(thrown);
    const body = errorToJsonBytes(error, {});
    const answerHeaders: OutgoingHttpHeaders = {
      [constants.HTTP2_HEADER_STATUS]: codeToHttpStatus(error.code),
      'content-type': 'application/json',
      'content-length': body.byteLength,
    };
    error.metadata.forEach((value, name) => (answerHeaders[name] = value));
    respond(stream, answerHeaders, body);
  }
}

/**
 * What node's HTTP/2 server does for a stream when it has a `request` listener (its
 * compatibility layer, `onServerStream`), for the streams connect-node serves: the request and
 * response objects, CONNECT refused, `Expect` answered.
 */
function serveCompatible(
  handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  rawHeaders: string[],
): void {
  const req = new Http2ServerRequest(stream, headers, {}, rawHeaders);
  const res = new Http2ServerResponse(stream);
  if (headers[constants.HTTP2_HEADER_METHOD] === 'CONNECT') {
    res.statusCode = constants.HTTP_STATUS_METHOD_NOT_ALLOWED;
    res.end();
    return;
  }
  if (headers.expect !== undefined) {
    if (headers.expect !== '100-continue') {
      res.statusCode = constants.HTTP_STATUS_EXPECTATION_FAILED;
      res.end();
      return;
    }
    res.writeContinue();
  }
  handler(req, res);
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
  // No `request` listener: node would build its compatibility objects for every stream.
  const server: Http2Server = createServer();
  // (node passes the raw headers too, which its types leave out)
  server.on('stream', (stream, headers, _flags, rawHeaders?: string[]) => {
    const path = headers[constants.HTTP2_HEADER_PATH];
    const method =
      typeof path === 'string' && isConnectUnaryProto(headers)
        ? dispatcher.methodAt(path)
        : undefined;
    if (method === undefined) serveCompatible(adapter, stream, headers, rawHeaders ?? []);
    else serveUnary(call, method, stream, headers);
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
