import type { ServerResponse } from 'node:http';
import { GatewayError } from '@gateway/errors';

/**
 * The answer of a shed request: 503 SERVICE_UNAVAILABLE with `Retry-After: 1`. One instance
 * for every refusal: an error's stack trace is taken when it is made, and a saturated edge
 * should not take one per refused request.
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
  readonly inFlight: number;
};

/**
 * Issue 8 (S5, beyond capacity): without a bound, requests beyond what the CPU can serve queue
 * up inside the process and every answer, also the ones within capacity, waits longer and
 * longer. The operations it guards (start, exchange, introspect: fast, CPU-bound work and one
 * Redis round trip, nothing that waits on an identity provider) are therefore refused at once
 * (503, `Retry-After: 1`) while `maxInFlight` of them are in flight. At a fraction of a
 * millisecond each, 128 in flight already mean tens of milliseconds of queued work; a full
 * load of normal traffic (a hundred keep-alive connections of platform backends) stays below
 * it. A refusal costs a few microseconds, so a saturated edge still answers everyone quickly:
 * what it can serve with 200, the excess with a 503 that a client retries.
 */
export function createLoadShedder(options: { maxInFlight: number }): LoadShedder {
  let inFlight = 0;
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
    get inFlight() {
      return inFlight;
    },
  };
}
