import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { fromConnectError, GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import { wantsErrorPage, writeErrorPage, type ErrorPageOptions } from './error-page.js';
import type { OperationCatalog } from './operation-catalog.js';

const retryAfterSeconds: Partial<Record<string, string>> = {
  SERVICE_UNAVAILABLE: '5',
  IDENTITY_UNAVAILABLE: '5',
};

/**
 * Writes a failure as the spec's `{ code, message, details? }` with the status of its code
 * (spec 7), never cached; `Retry-After` on 429 and on unavailable dependencies. Unexpected
 * failures are logged with their cause and answered as a bare INTERNAL_ERROR: never a stack
 * trace. Shared by Express's error handler and the fast lane. With `page` (the request is a
 * browser navigation that prefers HTML, error-page.ts) the same error is an HTML page instead.
 */
export function writeErrorAnswer(
  res: ServerResponse,
  error: unknown,
  logger: Logger,
  path: string,
  page?: ErrorPageOptions,
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
  if (page !== undefined) {
    writeErrorPage(res, gatewayError, page);
    return;
  }
  const payload = JSON.stringify(gatewayError.toBody());
  res.statusCode = gatewayError.status;
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}

/**
 * The edge's one error boundary: every failure, whether raised at the edge or by a service
 * across Connect, leaves through `writeErrorAnswer`; as a page for a browser navigation to a
 * browser endpoint or to a path no route serves.
 */
export function createErrorHandler(
  logger: Logger,
  pageOptions: ErrorPageOptions = {},
): ErrorRequestHandler {
  return function answerWithErrorBody(error: unknown, req, res, next) {
    if (res.headersSent) {
      next(error);
      return;
    }
    const unmatchedRoute = res.locals.unmatchedRoute === true;
    const page = wantsErrorPage(req, req.path, unmatchedRoute) ? pageOptions : undefined;
    writeErrorAnswer(res, error, logger, req.path, page);
  };
}

/**
 * Requests that matched no route: 405 with `Allow` when the path exists for other methods,
 * otherwise 404 NOT_FOUND.
 */
export function createUnmatchedRouteHandler(catalog: OperationCatalog): RequestHandler {
  return function answerUnmatchedRoute(req, res, next) {
    const allowed = catalog.allowedMethods(req.path);
    if (allowed.length > 0) {
      res.setHeader('Allow', allowed.join(', '));
      next(new GatewayError('METHOD_NOT_ALLOWED', `${req.method} is not served on this path.`));
      return;
    }
    // A browser that navigates to an unknown path gets its 404 as a page (error-page.ts).
    res.locals.unmatchedRoute = true;
    next(new GatewayError('NOT_FOUND', 'No such route.'));
  };
}
