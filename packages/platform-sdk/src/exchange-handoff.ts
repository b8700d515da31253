import { setTimeout as pause } from 'node:timers/promises';
import { GatewayPlatformError } from './errors.js';
import { callGateway } from './gateway-request.js';
import type { PlatformSettings } from './options.js';

// Spec 4.4 and docs/decisions.md: a 503 from the exchange spent nothing (a redeem that reaches
// the gateway's store after it stopped waiting changes nothing), and no answer at all may mean
// the same; so the exchange is sent again, a few times, with the same code and key. A retry
// after a redeem whose 200 was lost gets 404 NOT_FOUND (spec 3.2: a used code): the caller
// sends the browser to sign in again. Other failures (a 500, 429, a refusal) are final.

/** At most this many exchanges per callback: the first and two retries. */
const EXCHANGE_ATTEMPTS = 3;
/**
 * The retries end within the shortest handoff lifetime the gateway allows (30 s,
 * AUTH_HANDOFF_TTL_SECONDS, spec 2.15): past it, a retry can only get 404.
 */
const RETRY_WINDOW_MS = 30_000;
/** The pause after no answer, or a 503 without Retry-After, growing with each attempt. */
const PAUSE_WITHOUT_RETRY_AFTER_MS = 250;

/** The gateway could not answer, and may have redeemed the code: the same request may. */
export function isRetryableExchangeFailure(error: unknown): error is GatewayPlatformError {
  return (
    error instanceof GatewayPlatformError &&
    error.code === 'GATEWAY_UNAVAILABLE' &&
    (error.status === undefined || error.status === 503)
  );
}

/** Redeems the handoff code with the BFF key, retrying as above. Answers the 200 body. */
export async function exchangeHandoff(settings: PlatformSettings, code: string): Promise<unknown> {
  const started = Date.now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await callGateway(settings, {
        path: '/v1/auth/exchange',
        operation: 'exchange',
        credentials: settings.bffKey,
        body: { code },
      });
    } catch (error) {
      if (!isRetryableExchangeFailure(error) || attempt >= EXCHANGE_ATTEMPTS) throw error;
      const delayMs =
        error.retryAfterSeconds === undefined
          ? PAUSE_WITHOUT_RETRY_AFTER_MS * attempt
          : error.retryAfterSeconds * 1000;
      // The next attempt must start, and have its time-out, within the window.
      if (Date.now() - started + delayMs + settings.timeoutMs > RETRY_WINDOW_MS) throw error;
      await pause(delayMs);
    }
  }
}
