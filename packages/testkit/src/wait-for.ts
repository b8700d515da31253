import { setTimeout as sleep } from 'node:timers/promises';

export type WaitForOptions = {
  /** Give up after this long. */
  timeoutMs: number;
  /** Pause between checks. */
  intervalMs: number;
  /** What is being waited for; named in the timeout error. */
  what: string;
};

/**
 * Calls `check` until it resolves to true. A check that throws counts as "not yet"; the last
 * such error is attached as `cause` if the wait times out.
 */
export async function waitFor(
  check: () => Promise<boolean>,
  { timeoutMs, intervalMs, what }: WaitForOptions,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await sleep(Math.min(intervalMs, remaining));
  }
}
