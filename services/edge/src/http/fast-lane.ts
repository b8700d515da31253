import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import {
  logHttpExchange,
  REQUEST_ID_HEADER,
  requestIdOf,
  traceHttpServerExchange,
  type Logger,
} from '@gateway/telemetry';
import { writeErrorAnswer } from './error-handler.js';
import { wantsErrorPage, type ErrorPageOptions } from './error-page.js';
import { runLeanOperation, type AnyLeanOperation, type LeanContext } from './lean-operation.js';
import type { LoadShedder } from './load-shedding.js';
import type { LimitedOperation, RateLimiter } from './rate-limit.js';
import { setSecurityHeaders } from './security-headers.js';

export type FastLaneOptions = {
  operations: readonly AnyLeanOperation[];
  context: LeanContext;
  logger: Logger;
  production: boolean;
  limiter: RateLimiter;
  /** Bounds the sheddable operations in flight (S5). */
  shedder: LoadShedder;
  /** The client's address, after trusted proxies (as Express's `req.ip`). */
  clientAddress: (req: IncomingMessage) => string;
  /** For the error page a browser navigation to start or callback may get (error-page.ts). */
  errorPage: ErrorPageOptions;
};

/** Answers a request it serves and returns true; false leaves the request to Express. */
export type FastLane = (req: IncomingMessage, res: ServerResponse) => boolean;

type Route = { operation: AnyLeanOperation; name: () => string; route: () => string };

const LIMITS: Record<string, LimitedOperation> = {
  startAuthentication: 'browser',
  handleIdentityCallback: 'browser',
  exchangeAuthenticationHandoff: 'exchange',
  introspectGatewaySession: 'introspect',
};

/**
 * Issue 8: the login flow's busiest operations served on node:http without Express, whose
 * own per-request cost (router, request and response decoration) was larger than all of an
 * introspection's real work. Everything else the edge does to a request happens here too, in
 * the same order and with the same helpers: security headers, request id, trace span named
 * by operationId, one log line, rate limits, then the operation itself (lean-operation.ts,
 * shared with the Express route) and the spec's error body, or the same error as a page for a
 * browser navigation that prefers HTML (error-page.ts).
 *
 * Requests that carry an `Origin` are left to Express: credentialed CORS (spec 5) is its
 * middleware's business, and platform backends and browser navigations send none.
 */
export function createFastLane(options: FastLaneOptions): FastLane {
  const routes = new Map<string, Route>();
  for (const operation of options.operations) {
    const { method, path, operationId } = operation.definition;
    // The span's name and route, once per operation rather than per request.
    const name = () => operationId;
    const route = () => path;
    routes.set(`${method.toUpperCase()} ${path}`, { operation, name, route });
  }
  const { logger } = options;

  return function serveFastLane(req, res) {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart < 0 ? url : url.slice(0, queryStart);
    const route = routes.get(`${req.method ?? ''} ${path}`);
    if (route === undefined || req.headers.origin !== undefined) return false;
    const { operation } = route;
    // Before anything else: a refusal is cheap only if it skips the span, the log line and
    // the error path (load-shedding.ts).
    if (operation.sheddable === true && !options.shedder.admit(res)) {
      options.shedder.refuse(req, res, path, operation.definition.operationId);
      return true;
    }

    setSecurityHeaders(res, path, options.production);
    const requestId = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const exchange = traceHttpServerExchange(req, res, {
      path,
      nameOf: route.name,
      routeOf: route.route,
    });
    exchange.within(() => {
      logHttpExchange(logger, req, res, { path, requestId: () => requestId });
      void serve(operation, req, res, path, queryStart < 0 ? '' : url.slice(queryStart + 1));
    });
    return true;
  };

  async function serve(
    operation: AnyLeanOperation,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    queryString: string,
  ): Promise<void> {
    try {
      const limited = LIMITS[operation.definition.operationId];
      if (limited !== undefined) {
        await options.limiter.check(limited, req, options.clientAddress(req));
      }
      // Express 5's "simple" query parser is node:querystring: the same values either way.
      const query = operation.definition.query ? parseQueryString(queryString) : undefined;
      await runLeanOperation(operation, options.context, req, res, query);
    } catch (error) {
      if (res.headersSent) {
        logger.error({ err: error, path }, 'request failed after its answer started');
        res.destroy();
        return;
      }
      const page = wantsErrorPage(req, path) ? options.errorPage : undefined;
      writeErrorAnswer(res, error, logger, path, page);
    }
  }
}
