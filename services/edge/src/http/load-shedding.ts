import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '@gateway/errors';
import { gatewayMetrics, REQUEST_ID_HEADER, requestIdOf, type Logger } from '@gateway/telemetry';
import { securityHeaderPairs, type SecurityHeaderSet } from './security-headers.js';

/**
 * What a shed request is answered: 503 SERVICE_UNAVAILABLE with `Retry-After: 1`, the spec's
 * error body. Never thrown: `createLoadShedder` writes it from bytes made once.
 */
export const OVERLOADED = new GatewayError(
  'SERVICE_UNAVAILABLE',
  'The gateway is at capacity; retry shortly.',
  { retryAfterSeconds: 1 },
);

export type LoadShedder = {
  /**
   * Whether to take the request: false when `maxInFlight` requests are already in flight (the
   * caller answers 503 at once). A taken request counts until its response finishes or its
   * connection closes.
   */
  admit(res: ServerResponse): boolean;
  /**
   * Answers a request `admit` refused: the 503 above with the headers every /v1/auth answer
   * carries, written in one piece, and counted (below) instead of traced and logged one by one.
   */
  refuse(req: IncomingMessage, res: ServerResponse, path: string, operationId: string): void;
  readonly inFlight: number;
};

/**
 * Issue 8 (S5, beyond capacity): without a bound, requests beyond what the CPU can serve queue
 * up inside the process and every answer, also the ones within capacity, waits longer and
 * longer. The operations it guards (start, exchange, introspect: fast, CPU-bound work and one
 * Redis round trip, nothing that waits on an identity provider) are therefore refused at once
 * (503, `Retry-After: 1`) while `maxInFlight` of them are in flight. At a fraction of a
 * millisecond each, 100 in flight already mean tens of milliseconds of queued work on a slow
 * machine; a full load of normal traffic (a hundred keep-alive connections of platform
 * backends, one request in flight each) never exceeds it. The admitted requests' latency under
 * overload is about the bound over the rate served, so the bound sets its usual level (at
 * 120% of capacity 128 gave a p99 about a quarter higher than 100; the stalls of a shared
 * machine make the rest of the tail, docs/decisions.md).
 *
 * A refusal must cost far less than an answer, or refusing the excess takes the CPU the
 * admitted requests need and the edge serves less the more it is offered. With a span, a log
 * line and the error path per refusal it cost about as much as an introspection: at 120% of
 * capacity (open-loop) the edge served under half of what it serves unloaded and refused the
 * rest. So a refusal is decided before any of that, answered with prebuilt headers and body,
 * counted in `gateway.http.server.shed`, and logged as one summary line per `reportEveryMs`
 * while refusals happen (a line per refused request would add work exactly when there is no
 * CPU to spare).
 */
export function createLoadShedder(options: {
  maxInFlight: number;
  production: boolean;
  logger: Logger;
  /** How often a summary of the refusals is logged while there are any; default 1 s. */
  reportEveryMs?: number;
}): LoadShedder {
  let inFlight = 0;
  const body = Buffer.from(JSON.stringify(OVERLOADED.toBody()));
  // The error answer's headers and the security headers of the path (as `writeErrorAnswer`
  // and `setSecurityHeaders` give every other answer), made once per set of security headers
  // (securityHeaderPairs has four, so this holds at most two for one edge).
  const answerHeaders = [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(body.length),
    'Retry-After',
    String(OVERLOADED.retryAfterSeconds),
  ];
  const headersBySet = new Map<SecurityHeaderSet, string[]>();
  const headersOf = (path: string): string[] => {
    const set = securityHeaderPairs(path, options.production);
    let headers = headersBySet.get(set);
    if (headers === undefined) {
      headers = [...answerHeaders, ...set.flat()];
      headersBySet.set(set, headers);
    }
    return headers;
  };
  const refused = new Map<string, number>();
  let report: NodeJS.Timeout | undefined;
  const reportRefusals = () => {
    report = undefined;
    options.logger.warn(
      { shed: Object.fromEntries(refused), maxInFlight: options.maxInFlight },
      'requests refused at the bound of requests in flight',
    );
    refused.clear();
  };
  return {
    admit(res) {
      if (options.maxInFlight > 0 && inFlight >= options.maxInFlight) return false;
      inFlight += 1;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        inFlight -= 1;
      };
      res.once('finish', release);
      res.once('close', release);
      return true;
    },
    refuse(req, res, path, operationId) {
      res.writeHead(503, [...headersOf(path), REQUEST_ID_HEADER, requestIdOf(req)]);
      res.end(body);
      gatewayMetrics.recordShedRequest(operationId);
      refused.set(operationId, (refused.get(operationId) ?? 0) + 1);
      report ??= setTimeout(reportRefusals, options.reportEveryMs ?? 1000).unref();
    },
    get inFlight() {
      return inFlight;
    },
  };
}
