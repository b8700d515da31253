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
import { create, fromBinary, toBinary, type DescMethod } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import {
  BatchedAnswerSchema,
  BatchService,
  CallManyResponseSchema,
  type BatchedAnswer,
  type CallManyRequest,
} from '@gateway/contracts';
import type { ServiceRoutes } from './service-routes.js';
import {
  chainUnary,
  copyHttp2Headers,
  methodPath,
  NEVER_ABORTED,
  type UnaryCall,
} from './unary-chain.js';
import { createUnaryDispatcher, type UnaryDispatcher } from './unary-dispatcher.js';

/** Where the HTTP/2 transport sends a turn's calls together (proto/rpc/v1/batch.proto). */
const BATCH_PATH = methodPath(BatchService.method.callMany);

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

/** One unary call served: the response message's bytes, or the error. */
type Served =
  | { ok: true; body: Uint8Array; header: Headers; trailer: Headers }
  | { ok: false; error: ConnectError };

/**
 * Serves one call from its request bytes: decoded, passed through the service interceptors to
 * the implementation, the answer encoded. Never throws: a failure is the call's error.
 */
async function serveOne(
  call: UnaryCall,
  method: DescMethod,
  path: string,
  header: Headers,
  request: Uint8Array,
): Promise<Served> {
  try {
    let message;
    try {
      message = fromBinary(method.input, request);
    } catch (error) {
      throw new ConnectError(
        'the request message cannot be read',
        Code.InvalidArgument,
        undefined,
        undefined,
        error,
      );
    }
    const answer = await call({
      stream: false,
      service: method.parent,
      method,
      requestMethod: 'POST',
      url: path,
      signal: NEVER_ABORTED,
      header,
      contextValues: createContextValues(),
      message,
    } as UnaryRequest);
    return {
      ok: true,
      body: toBinary(method.output, answer.message),
      header: answer.header,
      trailer: answer.trailer,
    };
  } catch (thrown) {
    return { ok: false, error: ConnectError.from(thrown) };
  }
}

async function answerUnary(
  call: UnaryCall,
  method: DescMethod,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  chunks: Buffer[],
): Promise<void> {
  const header = new Headers();
  copyHttp2Headers(headers, header);
  const served = await serveOne(
    call,
    method,
    headers[constants.HTTP2_HEADER_PATH] as string,
    header,
    chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
  );
  if (stream.destroyed || stream.closed) return;
  try {
    writeServed(stream, served);
  } catch (thrown) {
    // The answer could not be written (a header value an implementation or interceptor set
    // that HTTP/2 refuses): its error instead, unless part of the answer went out already.
    if (stream.destroyed || stream.closed) return;
    if (stream.headersSent) {
      stream.close();
      return;
    }
    writeServed(stream, { ok: false, error: ConnectError.from(thrown) });
  }
}

/**
 * A served call as the Connect protocol answers it: 200 with the message, or the error's HTTP
 * status with its JSON body (details included) and its metadata as headers.
 */
function writeServed(stream: ServerHttp2Stream, served: Served): void {
  if (served.ok) {
    const answerHeaders: OutgoingHttpHeaders = {
      [constants.HTTP2_HEADER_STATUS]: 200,
      'content-type': 'application/proto',
      'content-length': served.body.byteLength,
    };
    served.header.forEach((value, name) => (answerHeaders[name] = value));
    served.trailer.forEach((value, name) => (answerHeaders[`trailer-${name}`] = value));
    respond(stream, answerHeaders, served.body);
    return;
  }
  const { error } = served;
  const body = errorToJsonBytes(error, {});
  const answerHeaders: OutgoingHttpHeaders = {
    [constants.HTTP2_HEADER_STATUS]: codeToHttpStatus(error.code),
    'content-type': 'application/json',
    'content-length': body.byteLength,
  };
  error.metadata.forEach((value, name) => (answerHeaders[name] = value));
  respond(stream, answerHeaders, body);
}

/** The headers of a Connect unary answer as a protobuf map (repeated fields joined). */
function headerMap(headers: Headers): Record<string, string> {
  const map: Record<string, string> = {};
  headers.forEach((value, name) => (map[name] = value));
  return map;
}

/**
 * Serves `BatchService.CallMany`: the HTTP/2 transport sends the calls of one turn of its
 * event loop together (http2-connect-transport.ts), and each is served as `serveUnary` serves
 * a call on a stream of its own: with the stream's headers, through the service interceptors,
 * with its own answer or error. They run concurrently; the batch is answered once every call
 * is. A call of a method this server does not serve fails alone.
 */
function batchCallOf(call: UnaryCall, dispatcher: UnaryDispatcher): UnaryCall {
  return async (request) => {
    const batch = request.message as CallManyRequest;
    const answers = await Promise.all(
      batch.calls.map(async ({ path, message }): Promise<BatchedAnswer> => {
        const method = dispatcher.methodAt(path);
        const served: Served =
          method === undefined
            ? {
                ok: false,
                error: new ConnectError(`${path} is not served here`, Code.Unimplemented),
              }
            : await serveOne(call, method, path, new Headers(request.header), message);
        return create(
          BatchedAnswerSchema,
          served.ok
            ? {
                result: { case: 'message', value: served.body },
                header: headerMap(served.header),
                trailer: headerMap(served.trailer),
              }
            : {
                result: { case: 'error', value: errorToJsonBytes(served.error, {}) },
                header: headerMap(served.error.metadata),
              },
        );
      }),
    );
    return {
      stream: false,
      service: BatchService,
      method: BatchService.method.callMany,
      header: new Headers(),
      trailer: new Headers(),
      message: create(CallManyResponseSchema, { answers }),
    } as UnaryResponse;
  };
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
  const batchCall = batchCallOf(call, dispatcher);
  // No `request` listener: node would build its compatibility objects for every stream.
  const server: Http2Server = createServer();
  // (node passes the raw headers too, which its types leave out)
  server.on('stream', (stream, headers, _flags, rawHeaders?: string[]) => {
    const path = headers[constants.HTTP2_HEADER_PATH];
    const unary = typeof path === 'string' && isConnectUnaryProto(headers);
    if (unary && path === BATCH_PATH) {
      serveUnary(batchCall, BatchService.method.callMany, stream, headers);
      return;
    }
    const method = unary ? dispatcher.methodAt(path) : undefined;
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
