import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { GatewayError } from '@gateway/errors';

/** The answer of a shed request: 503 SERVICE_UNAVAILABLE with `Retry-After: 1`. */
export class OverloadedError extends GatewayError {
  readonly retryAfterSeconds = 1;

  constructor() {
    super('SERVICE_UNAVAILABLE', 'The gateway is at capacity; retry shortly.');
  }
}

/** Event-loop utilisation above which the process counts as saturated. */
const SATURATED_UTILIZATION = 0.9;
/** How often the utilisation is sampled. */
const SAMPLE_INTERVAL_MS = 100;

export type LoadShedder = {
  /**
   * Whether to take the request: false when the process is saturated and already holds
   * `maxInFlight` requests (the caller answers 503 at once). A taken request counts until its
   * response finishes or its connection closes.
   */
  admit(res: ServerResponse): boolean;
  readonly inFlight: number;
  close(): void;
};

/**
 * Issue 8 (S5, beyond capacity): without shedding, requests beyond what the CPU can serve
 * queue up inside the process and every answer, also the ones within capacity, waits longer
 * and longer. The edge therefore refuses new /v1 requests at once (503, `Retry-After: 1`)
 * while both hold:
 * - the event loop was busy more than 90% of the last 100 ms (CPU-bound, not waiting on an
 *   identity provider or a database: requests that wait do not cost CPU and are not shed), and
 * - more than `maxInFlight` requests are in flight (a full load of normal traffic, e.g. a
 *   hundred keep-alive connections of platform backends, stays below it).
 * A refusal costs a few microseconds, so a saturated edge answers everyone quickly: most
 * requests within capacity, the excess with 503 that a client retries.
 */
export function createLoadShedder(options: { maxInFlight: number }): LoadShedder {
  let inFlight = 0;
  let saturated = false;
  let last = performance.eventLoopUtilization();
  const sampler = setInterval(() => {
    const now = performance.eventLoopUtilization();
    saturated = performance.eventLoopUtilization(now, last).utilization > SATURATED_UTILIZATION;
    last = now;
  }, SAMPLE_INTERVAL_MS);
  sampler.unref();
  const release = () => {
    inFlight -= 1;
  };
  return {
    admit(res) {
      if (options.maxInFlight > 0 && saturated && inFlight >= options.maxInFlight) return false;
      inFlight += 1;
      let released = false;
      const once = () => {
        if (released) return;
        released = true;
        release();
      };
      res.once('finish', once);
      res.once('close', once);
      return true;
    },
    get inFlight() {
      return inFlight;
    },
    close() {
      clearInterval(sampler);
    },
  };
}
