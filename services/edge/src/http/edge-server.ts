import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  logHttpExchange,
  REQUEST_ID_HEADER,
  requestIdOf,
  traceHttpServerExchange,
  type Logger,
} from '@gateway/telemetry';
import { isCorsPath, type Cors } from './cors.js';
import { unmatchedRouteError, writeErrorAnswer } from './error-handler.js';
import { wantsErrorPage, type ErrorPageOptions } from './error-page.js';
import { admissionCredentialOf, type LoadShedder } from './load-shedding.js';
import type { EdgeExchange, OperationRunner } from './operation-runner.js';
import type { ErrorBodyFormat } from './operation.js';
import { UndecodablePathError, type RouteMatch, type RouteTable } from './route-table.js';
import { securityHeaderPairs, setSecurityHeaders } from './security-headers.js';
import { assertSingletonHeadersOnce } from './singleton-headers.js';

/**
 * A page served outside the operation runner: the API documentation and the absent icon.
 * `path` ending in `/` serves everything below it. GET and HEAD only.
 */
export type EdgePage = { path: string; serve: RequestListener };

export type EdgeServerOptions = {
  routes: RouteTable;
  runOperation: OperationRunner;
  /** The operation runner's shedder: a request it cannot admit now is refused on arrival. */
  shedder: LoadShedder;
  /** The client's address, after trusted proxies. */
  clientAddress: (req: IncomingMessage) => string;
  pages: readonly EdgePage[];
  cors: Cors;
  logger: Logger;
  production: boolean;
  errorPage: ErrorPageOptions;
};

type Target =
  | { kind: 'operation'; match: RouteMatch; name: () => string; route: () => string }
  | { kind: 'page'; page: EdgePage; name: () => string; route: () => string }
  | { kind: 'unmatched'; failure?: unknown; name: () => string; route: () => undefined };

/**
 * The edge's request listener on node:http. A sheddable operation that cannot be admitted
 * now is refused first (a cross-origin one by the runner, with its CORS headers), with nothing
 * else spent on it (load-shedding.ts). Every other request
 * gets the security headers, a request id, a trace span and one log line here; a request to
 * `/v1` from an `Origin` gets
 * credentialed CORS (a preflight is answered then). A request for an operation that repeats a
 * singleton header is refused (singleton-headers.ts); any other goes through the operation
 * runner, whatever headers it carries; a page is handed to its
 * listener; anything else is 404, or 405 with `Allow`.
 */
export function createEdgeServer(options: EdgeServerOptions): RequestListener {
  const targetOf = createTargetResolver(options);
  return function serveEdge(req, res) {
    const startedAt = process.hrtime.bigint();
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart < 0 ? url : url.slice(0, queryStart);
    const target = targetOf(req.method ?? 'GET', path);
    if (target.kind === 'operation' && refusedOnArrival(options, target.match, req, res, path)) {
      return;
    }
    setSecurityHeaders(res, path, options.production);
    const requestId = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const span = traceHttpServerExchange(req, res, {
      path,
      nameOf: target.name,
      routeOf: target.route,
    });
    let logged = false;
    const exchange: EdgeExchange = {
      req,
      res,
      path,
      query: queryStart < 0 ? '' : url.slice(queryStart + 1),
      requestId,
      log() {
        if (logged) return;
        logged = true;
        logHttpExchange(options.logger, req, res, { path, requestId: () => requestId, startedAt });
      },
    };
    span.within(() => void dispatch(options, target, exchange));
  };
}

/**
 * Refuses a sheddable operation that the shedder could not admit now: the 503 with the
 * security headers and a request id, and no span, log line or body read. A refusal must cost
 * far less than an answer.
 */
function refusedOnArrival(
  options: EdgeServerOptions,
  { operation }: RouteMatch,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): boolean {
  if (operation.sheddable !== true) return false;
  // A browser reads a refusal only with its CORS headers: the runner refuses that one.
  if (req.headers.origin !== undefined) return false;
  if (options.shedder.mayAdmit(admissionCredentialOf(req), options.clientAddress(req))) {
    return false;
  }
  const headers = [REQUEST_ID_HEADER, requestIdOf(req)];
  for (const [name, value] of securityHeaderPairs(path, options.production)) {
    headers.push(name, value);
  }
  options.shedder.refuse(res, operation.operationId, headers);
  return true;
}

/** What serves a request, with its span's name and route (made once per operation or page). */
function createTargetResolver(options: EdgeServerOptions) {
  const spanNames = new WeakMap<object, { name: () => string; route: () => string }>();
  const namesOf = (key: object, name: string, route: string) => {
    let names = spanNames.get(key);
    if (names === undefined) {
      names = { name: () => name, route: () => route };
      spanNames.set(key, names);
    }
    return names;
  };
  const pageOf = (path: string) =>
    options.pages.find((page) =>
      page.path.endsWith('/') ? path.startsWith(page.path) : path === page.path,
    );
  return function targetOf(method: string, path: string): Target {
    try {
      const match = options.routes.match(method, path);
      if (match !== undefined) {
        const { operationId, path: route } = match.operation;
        return { kind: 'operation', match, ...namesOf(match.operation, operationId, route) };
      }
    } catch (failure) {
      return { kind: 'unmatched', failure, name: () => method, route: () => undefined };
    }
    const page = method === 'GET' || method === 'HEAD' ? pageOf(path) : undefined;
    if (page !== undefined) {
      return { kind: 'page', page, ...namesOf(page, `GET ${page.path}`, page.path) };
    }
    return { kind: 'unmatched', name: () => `${method} unmatched`, route: () => undefined };
  };
}

async function dispatch(
  options: EdgeServerOptions,
  target: Target,
  exchange: EdgeExchange,
): Promise<void> {
  const { req, res, path } = exchange;
  try {
    if (req.headers.origin !== undefined && isCorsPath(path)) {
      if ((await options.cors.apply(req, res)) === 'answered') return exchange.log();
    }
    if (target.kind === 'operation') {
      // A repeated Authorization, Content-Type or Host is refused, never read first-wins.
      assertSingletonHeadersOnce(req.rawHeaders);
      return await options.runOperation(target.match, exchange);
    }
    exchange.log();
    if (target.kind === 'page') return target.page.serve(req, res);
    answerUnmatched(options, exchange, target.failure);
  } catch (error) {
    exchange.log();
    const format = target.kind === 'operation' ? target.match.operation.errorBody : undefined;
    answerError(options, exchange, error, false, format);
  }
}

function answerUnmatched(options: EdgeServerOptions, exchange: EdgeExchange, failure: unknown) {
  const { req, res, path } = exchange;
  if (failure !== undefined) {
    const format = failure instanceof UndecodablePathError ? failure.errorBody : undefined;
    return answerError(options, exchange, failure, false, format);
  }
  const method = req.method ?? 'GET';
  const allowed = options.routes.allowedMethods(path);
  if (method === 'OPTIONS' && allowed.length > 0) {
    res.setHeader('Allow', allowed.join(', '));
    res.statusCode = 204;
    res.end();
    return;
  }
  // A browser that navigates to an unknown path gets its 404 as a page (error-page.ts).
  answerError(options, exchange, unmatchedRouteError(res, method, allowed), allowed.length === 0);
}

function answerError(
  options: EdgeServerOptions,
  exchange: EdgeExchange,
  error: unknown,
  unmatchedRoute: boolean,
  format?: ErrorBodyFormat,
): void {
  const { req, res, path } = exchange;
  if (res.headersSent) {
    options.logger.error({ err: error, path }, 'request failed after its answer started');
    res.destroy();
    return;
  }
  const page = wantsErrorPage(req, path, unmatchedRoute) ? options.errorPage : undefined;
  writeErrorAnswer(res, error, options.logger, path, page, format);
}
