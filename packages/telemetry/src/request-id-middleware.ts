import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What an incoming request id may look like to be kept; anything else is replaced. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Whether an incoming `x-request-id` is kept as is. */
export function isAcceptedRequestId(value: unknown): value is string {
  return typeof value === 'string' && ACCEPTED_REQUEST_ID.test(value);
}

/**
 * Gives every request an id: the caller's `x-request-id` when it is 1-128 characters of
 * `A-Z a-z 0-9 . _ -`, a random UUID otherwise. Echoed as the `x-request-id` response header
 * and kept in `res.locals.requestId`.
 */
export function createRequestIdMiddleware(): RequestHandler {
  return function assignRequestId(req, res, next) {
    const requestId = requestIdOf(req);
    res.locals.requestId = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    next();
  };
}

/** The caller's `x-request-id` when acceptable, else a new random UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return isAcceptedRequestId(incoming) ? incoming : randomUUID();
}

/** The id given by `createRequestIdMiddleware`, if it ran. */
export function getRequestId(res: Response): string | undefined {
  const requestId: unknown = res.locals.requestId;
  return typeof requestId === 'string' ? requestId : undefined;
}
