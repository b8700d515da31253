/** Settings of the back-off after failed platform authentications (docs/decisions.md). */
export type PlatformAuthenticationLimitSettings = {
  /** Failures of one address, or for one client id, answered 401 in a window; 0: no limit. */
  failuresBeforeBackoff: number;
  /** How long failures are counted: a window opens with the first failure of its key. */
  windowMs: number;
  /** How many addresses and client ids are tracked each; the oldest go first beyond it. */
  maxKeys: number;
};

export const PLATFORM_AUTHENTICATION_LIMITS: PlatformAuthenticationLimitSettings = {
  failuresBeforeBackoff: 10,
  windowMs: 10 * 60_000,
  maxKeys: 10_000,
};

/** Why a failed platform authentication is answered 429 rather than 401. */
export type PlatformAuthenticationRefusal = {
  limit: 'address' | 'client_id';
  /** Until the window of the key over its limit ends. */
  retryAfterSeconds: number;
};

export type PlatformAuthenticationLimits = {
  /**
   * Counts one failed authentication (credentials that did not verify) against its address
   * and presented client id. Answers the refusal (429) when either is over its limit in its
   * window, else undefined (401). Credentials that verify are never counted nor refused.
   */
  recordFailure(
    address: string,
    clientId: string | undefined,
  ): PlatformAuthenticationRefusal | undefined;
};

type FailureCount = { failures: number; windowEndsAt: number };

/**
 * Failures counted per address and per presented client id, in this process, in fixed
 * windows opened by each key's first failure. Only failures count and only failures are
 * refused: the back-off decides how a guess that did not verify is answered (the first
 * `failuresBeforeBackoff` of a window 401, the rest 429 until the window ends), never
 * whether a request is verified, so a key that verifies is answered whatever other clients
 * at its address or with its client id do. A refused guess counts but does not lengthen the
 * window. Each decision is two map look-ups.
 */
export function createPlatformAuthenticationLimits(
  settings: PlatformAuthenticationLimitSettings,
  now: () => number = Date.now,
): PlatformAuthenticationLimits {
  const addresses = new Map<string, FailureCount>();
  const clientIds = new Map<string, FailureCount>();
  const enabled = settings.failuresBeforeBackoff > 0;

  const fail = (counts: Map<string, FailureCount>, key: string, at: number) => {
    let count = counts.get(key);
    if (count !== undefined && count.windowEndsAt <= at) {
      counts.delete(key);
      count = undefined;
    }
    if (count === undefined) {
      if (counts.size >= settings.maxKeys) forgetOldest(counts);
      count = { failures: 0, windowEndsAt: at + settings.windowMs };
      counts.set(key, count);
    }
    count.failures += 1;
    return count.failures > settings.failuresBeforeBackoff ? count : undefined;
  };
  const retryAfterSeconds = (count: FailureCount, at: number) =>
    Math.max(1, Math.ceil((count.windowEndsAt - at) / 1000));

  return {
    recordFailure(address, clientId) {
      if (!enabled) return undefined;
      const at = now();
      const byAddress = fail(addresses, address, at);
      const byClientId = clientId === undefined ? undefined : fail(clientIds, clientId, at);
      if (byClientId !== undefined && (byAddress === undefined || later(byClientId, byAddress))) {
        return { limit: 'client_id', retryAfterSeconds: retryAfterSeconds(byClientId, at) };
      }
      if (byAddress !== undefined) {
        return { limit: 'address', retryAfterSeconds: retryAfterSeconds(byAddress, at) };
      }
      return undefined;
    },
  };
}

const later = (a: FailureCount, b: FailureCount) => a.windowEndsAt > b.windowEndsAt;

/**
 * Makes room for a new key: the oldest (insertion order) goes, in O(1) whatever the flood of
 * made-up ids or addresses; ended counts also go when they are next looked up.
 */
function forgetOldest(counts: Map<string, FailureCount>): void {
  const oldest = counts.keys().next();
  if (oldest.done !== true) counts.delete(oldest.value);
}
