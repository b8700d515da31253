import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '@gateway/errors';
import { gatewayMetrics, type Logger } from '@gateway/telemetry';
import { NO_STORE } from './cache-policy.js';

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
   * Whether to take the request (else the caller answers 503 at once): `credential` is what
   * the request authenticates with (its `Authorization` or `Cookie` header), `address` the
   * client's address. A taken request counts until its response finishes or its connection
   * closes. The rules are `createLoadShedder`'s.
   */
  admit(res: ServerResponse, credential: string | undefined, address: string): boolean;
  /**
   * Whether `admit` would take the request now, taking nothing: a request that could not be
   * taken is refused before its body is read, so a refusal costs no more than its answer.
   */
  mayAdmit(credential: string | undefined, address: string): boolean;
  /**
   * Answers a request that was not admitted: the 503 above with `headers` added (the security
   * headers and the request id, when they are not on the response already), written in one
   * piece, and counted (below) instead of logged one by one.
   */
  refuse(res: ServerResponse, operationId: string, headers?: readonly string[]): void;
  readonly inFlight: number;
};

/** What a request is admitted by, besides its address: its `Authorization` or `Cookie` header. */
export function admissionCredentialOf(req: IncomingMessage): string | undefined {
  return req.headers.authorization ?? req.headers.cookie;
}

/**
 * Beyond capacity: without a bound, requests beyond what the CPU can serve queue up inside
 * the process and every answer, also the ones within capacity, waits longer and longer. The
 * operations it guards (start, exchange, introspect: fast, CPU-bound work and one Redis round
 * trip, nothing that waits on an identity provider) are therefore refused at once (503,
 * `Retry-After: 1`) while `maxInFlight` of them are in flight. A request is counted from the
 * moment its body has arrived (operation-runner.ts): a client that sends its body slowly
 * holds no slot, only its connection, which the body deadline ends. At a fraction of a
 * millisecond each, 100 in flight already mean tens of milliseconds of queued work on a slow
 * machine; a full load of normal traffic (a hundred keep-alive connections of platform
 * backends, one request in flight each) never exceeds it.
 *
 * A refusal must cost far less than an answer, or refusing the excess takes the CPU the
 * admitted requests need and the edge serves less the more it is offered. So a refusal is
 * answered with a prebuilt body, counted in `gateway.http.server.shed`, and logged as one
 * summary line per `reportEveryMs` while refusals happen (a line per refused request would
 * add work exactly when there is no CPU to spare).
 *
 * The slots are shared fairly between clients: each credential and each address has a share
 * of a quarter of `maxInFlight` (docs/decisions.md). A client alone may fill `maxInFlight`,
 * so one busy platform sees the bound it always had. A client at or over its share gets no
 * slot while anybody else holds one and fewer than a share are free: a flood from one
 * address or of one credential drains down to `maxInFlight` minus a share. A client under
 * its share is taken up to a share beyond `maxInFlight`: those slots are kept for the
 * clients a flood would otherwise lock out, so the edge holds at most 1.25 x `maxInFlight`.
 * Deciding is a few map look-ups and no allocation beyond the release listener.
 */
export function createLoadShedder(options: {
  maxInFlight: number;
  logger: Logger;
  /** How often a summary of the refusals is logged while there are any; default 1 s. */
  reportEveryMs?: number;
}): LoadShedder {
  const fair = createFairSlots(options.maxInFlight);
  const body = Buffer.from(JSON.stringify(OVERLOADED.toBody()));
  const answerHeaders = [
    'Cache-Control',
    NO_STORE,
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(body.length),
    'Retry-After',
    String(OVERLOADED.retryAfterSeconds),
  ];
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
    admit(res, credential, address) {
      if (options.maxInFlight > 0 && !fair.mayTake(credential, address)) return false;
      fair.take(credential, address);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        fair.give(credential, address);
      };
      res.once('finish', release);
      res.once('close', release);
      return true;
    },
    mayAdmit(credential, address) {
      return options.maxInFlight <= 0 || fair.mayTake(credential, address);
    },
    refuse(res, operationId, headers) {
      res.writeHead(503, headers === undefined ? answerHeaders : [...answerHeaders, ...headers]);
      res.end(body);
      gatewayMetrics.recordShedRequest(operationId);
      refused.set(operationId, (refused.get(operationId) ?? 0) + 1);
      report ??= setTimeout(reportRefusals, options.reportEveryMs ?? 1000).unref();
    },
    get inFlight() {
      return fair.inFlight;
    },
  };
}

/** The slots in flight, counted in total, per credential and per address. */
function createFairSlots(maxInFlight: number) {
  const share = Math.max(1, Math.ceil(maxInFlight / 4));
  const byCredential = new Map<string, number>();
  const byAddress = new Map<string, number>();
  let inFlight = 0;
  const add = (counts: Map<string, number>, key: string, delta: number) => {
    const count = (counts.get(key) ?? 0) + delta;
    if (count === 0) counts.delete(key);
    else counts.set(key, count);
  };
  return {
    get inFlight() {
      return inFlight;
    },
    mayTake(credential: string | undefined, address: string): boolean {
      if (inFlight >= maxInFlight + share) return false;
      const ofAddress = byAddress.get(address) ?? 0;
      const ofCredential = credential === undefined ? 0 : (byCredential.get(credential) ?? 0);
      if (ofAddress < share && ofCredential < share) return true;
      const alone = ofAddress === inFlight;
      return inFlight < (alone ? maxInFlight : maxInFlight - share);
    },
    take(credential: string | undefined, address: string): void {
      inFlight += 1;
      add(byAddress, address, 1);
      if (credential !== undefined) add(byCredential, credential, 1);
    },
    give(credential: string | undefined, address: string): void {
      inFlight -= 1;
      add(byAddress, address, -1);
      if (credential !== undefined) add(byCredential, credential, -1);
    },
  };
}
