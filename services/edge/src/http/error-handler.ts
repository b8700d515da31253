import type { ServerResponse } from 'node:http';
import { fromConnectError, GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import { setErrorCachePolicy } from './cache-policy.js';
import { writeErrorPage, type ErrorPageOptions } from './error-page.js';
import type { ErrorBodyFormat } from './operation.js';

const retryAfterSeconds: Partial<Record<string, string>> = {
  SERVICE_UNAVAILABLE: '5',
  IDENTITY_UNAVAILABLE: '5',
};

/**
 * The edge's one error writer: every failure, whether raised at the edge or by a service
 * across Connect, is answered here as the spec's `{ code, message, details? }` with the
 * status of its code (spec 7), never cached; `Retry-After` on 429 and on unavailable
 * dependencies. Unexpected failures are logged with their cause and answered as a bare
 * INTERNAL_ERROR: never a stack trace. With `page` (the request is a browser navigation that
 * prefers HTML, error-page.ts) the same error is an HTML page instead; with the `oauth`
 * format (an operation an identity provider calls) the same status with OAuth 2.0's body.
 */
export function writeErrorAnswer(
  res: ServerResponse,
  error: unknown,
  logger: Logger,
  path: string,
  page?: ErrorPageOptions,
  format: ErrorBodyFormat = 'gateway',
): void {
  const gatewayError = fromConnectError(error);
  // A refusal on purpose (429 over a rate limit) says when to come
  // back itself and is no failure: the request's log line records it.
  const refusal = gatewayError.retryAfterSeconds;
  if (gatewayError.status >= 500 && refusal === undefined) {
    logger.error(
      { err: gatewayError.cause ?? gatewayError, errorCode: gatewayError.code, path },
      'request failed',
    );
  }
  const retryAfter = refusal === undefined ? retryAfterSeconds[gatewayError.code] : String(refusal);
  if (retryAfter !== undefined) res.setHeader('Retry-After', retryAfter);
  // A body that never arrived leaves the connection in an unknown state: close it.
  if (gatewayError.code === 'REQUEST_TIMEOUT') res.setHeader('Connection', 'close');
  setErrorCachePolicy(res);
  if (page !== undefined) {
    writeErrorPage(res, gatewayError, page);
    return;
  }
  const payload = JSON.stringify(
    format === 'oauth' ? oauthErrorBody(gatewayError) : gatewayError.toBody(),
  );
  res.statusCode = gatewayError.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}

/**
 * RFC 6749 5.2's error body, as Back-Channel Logout 1.0 (2.8) allows it: `invalid_request`
 * for every refusal of the request (the status tells 400 from 413 or 415),
 * `temporarily_unavailable` when a dependency is down, `server_error` otherwise; the
 * description is the gateway's message, which never carries a secret.
 */
export function oauthErrorBody(error: GatewayError): { error: string; error_description: string } {
  const kind =
    error.status < 500
      ? 'invalid_request'
      : error.status === 500
        ? 'server_error'
        : 'temporarily_unavailable';
  return { error: kind, error_description: error.message };
}

/**
 * A request no route serves: 405 with `Allow` when the path exists for other methods,
 * otherwise 404 NOT_FOUND.
 */
export function unmatchedRouteError(
  res: ServerResponse,
  method: string,
  allowed: readonly string[],
): GatewayError {
  if (allowed.length > 0) {
    res.setHeader('Allow', allowed.join(', '));
    return new GatewayError('METHOD_NOT_ALLOWED', `${method} is not served on this path.`);
  }
  return new GatewayError('NOT_FOUND', 'No such route.');
}
