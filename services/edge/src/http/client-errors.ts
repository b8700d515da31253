import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '@gateway/errors';

// Requests node:http refuses before any request listener runs (headers too large, a malformed
// request, headers that never end, an Expect it does not know) and one it lets through for us
// to refuse (no Host). Each is answered like any other error of the edge: the spec's
// `{ code, message }` with the status of its code, never cached, and the connection closed.

/** The refusal of a request node's parser gave up on, by the parser's error code. */
export function clientErrorOf(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError(
        'REQUEST_HEADER_FIELDS_TOO_LARGE',
        'The request headers are larger than the gateway reads.',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('REQUEST_TIMEOUT', 'The request did not arrive in time.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('PAYLOAD_TOO_LARGE', 'The chunk extensions are too large.');
    default:
      return new GatewayError('VALIDATION_ERROR', 'The request is not valid HTTP/1.1.');
  }
}

function rawAnswer(error: GatewayError): string {
  const payload = JSON.stringify(error.toBody());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    payload,
  ].join('\r\n');
}

/**
 * The server's `clientError` listener. A socket that is gone, or whose connection already has
 * an answer under way (a pipelined request after it), cannot take one: it is closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const answering = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering != null) {
    socket.destroy();
    return;
  }
  socket.end(rawAnswer(clientErrorOf(error.code)));
}

function writeJsonError(res: ServerResponse, error: GatewayError): void {
  const payload = JSON.stringify(error.toBody());
  res.writeHead(error.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  });
  res.end(payload);
}

/** The server's `checkExpectation` listener: an Expect other than `100-continue` is 417. */
export function answerUnmetExpectation(_req: IncomingMessage, res: ServerResponse): void {
  writeJsonError(
    res,
    new GatewayError('EXPECTATION_FAILED', 'Only `Expect: 100-continue` is supported.'),
  );
}

/**
 * RFC 9112 3.2: an HTTP/1.1 request without exactly one Host header is 400. Answers it and
 * says so; false for any other request.
 */
export function refusedForHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersion !== '1.1') return false;
  const hosts = req.headersDistinct.host?.length ?? 0;
  if (hosts === 1) return false;
  writeJsonError(res, new GatewayError('VALIDATION_ERROR', 'One Host header is required.'));
  return true;
}
