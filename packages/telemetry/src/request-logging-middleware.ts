import { context } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { getRequestId } from './request-id-middleware.js';
import { requestPathWithoutQuery } from './request-path.js';

const requestLoggers = new WeakMap<Logger, Logger>();

/**
 * The logger of request lines: they have a fixed shape that holds nothing secret (method,
 * the path without its query, status, duration, a request id of checked characters), so they
 * skip the redaction pass, a large part of the cost of writing one.
 */
function requestLoggerOf(logger: Logger): Logger {
  let requestLogger = requestLoggers.get(logger);
  if (requestLogger === undefined) {
    requestLogger = logger.child({}, { redact: [] });
    requestLoggers.set(logger, requestLogger);
  }
  return requestLogger;
}

/**
 * One log line when the response is finished (or the connection closed first): method,
 * path without query, status, duration in ms and request id. Never headers, query or body.
 * Called inside the request's trace context, the line carries its trace_id.
 */
export function logHttpExchange(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  options: {
    path: string;
    requestId: () => string | undefined;
    /** When the request arrived (`process.hrtime.bigint()`), if before this call; default now. */
    startedAt?: bigint;
  },
): void {
  const startedAt = options.startedAt ?? process.hrtime.bigint();
  const requestContext = context.active();
  const requestLogger = requestLoggerOf(logger);
  let logged = false;
  const logOnce = (): void => {
    if (logged) return;
    logged = true;
    const durationMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
    const completed = res.writableFinished;
    const status = res.headersSent ? res.statusCode : undefined;
    const fields = {
      method: req.method,
      path: options.path,
      status,
      durationMs: Math.round(durationMs * 1000) / 1000,
      requestId: options.requestId(),
    };
    context.with(requestContext, () => {
      if (!completed) requestLogger.warn(fields, 'request aborted');
      else if (status !== undefined && status >= 500) {
        requestLogger.error(fields, 'request completed');
      } else requestLogger.info(fields, 'request completed');
    });
  };
  res.once('finish', logOnce);
  res.once('close', logOnce);
}

/** Express middleware of `logHttpExchange`; placed after the tracing middleware. */
export function createRequestLoggingMiddleware(logger: Logger): RequestHandler {
  return function logRequest(req, res, next) {
    logHttpExchange(logger, req, res, {
      path: requestPathWithoutQuery(req),
      requestId: () => getRequestId(res),
    });
    next();
  };
}
