/** Settings of the back-off after failed platform authentications (docs/decisions.md). */
export type PlatformAuthenticationLimitSettings = {
  /** Failures of one address, or for one client id, before the back-off starts; 0: no limit. */
  failuresBeforeBackoff: number;
  /** How long failures are counted: a window opens with the first failure of its key. */
  windowMs: number;
  /** The first back-off; each further failure doubles it. */
  firstBackoffMs: number;
  /** The longest back-off. */
  maxBackoffMs: number;
  /** How many addresses and client ids are tracked each; the oldest go first beyond it. */
  maxKeys: number;
};

export const PLATFORM_AUTHENTICATION_LIMITS: PlatformAuthenticationLimitSettings = {
  failuresBeforeBackoff: 10,
  windowMs: 10 * 60_000,
  firstBackoffMs: 1000,
  maxBackoffMs: 5 * 60_000,
  maxKeys: 10_000,
};

/** Why a platform authentication is refused without asking the registry. */
export type PlatformAuthenticationRefusal = {
  limit: 'address' | 'client_id';
  retryAfterSeconds: number;
};

export type PlatformAuthenticationLimits = {
  /**
   * Whether an attempt from `address` may be verified. Refused (429): everything from an
   * address in its back-off, and a client id in its back-off when the address has failed
   * itself in its window. A refused attempt is a further failure of the key that refused it
   * (its back-off doubles). `clientIdOf` is called only when the client id matters.
   */
  check(
    address: string,
    clientIdOf: () => string | undefined,
  ): PlatformAuthenticationRefusal | undefined;
  /** Counts one refused credential (401) against its address and presented client id. */
  recordFailure(address: string, clientId: string | undefined): void;
};

type FailureCount = { failures: number; windowEndsAt: number; blockedUntil: number };

/**
 * Failures counted per address and per presented client id, in this process. Only failures
 * count: a platform whose key is right is never refused for traffic of its own, and a
 * client id under attack blocks only the addresses that fail themselves, so its platform's
 * backends (which do not fail) go on while every attacking address gets one guess per
 * window. A success resets nothing: an attacker holding one valid key cannot buy more
 * guesses with it. Each decision is two map look-ups; with no failures in any open window
 * nothing is looked up at all.
 */
export function createPlatformAuthenticationLimits(
  settings: PlatformAuthenticationLimitSettings,
  now: () => number = Date.now,
): PlatformAuthenticationLimits {
  const addresses = new Map<string, FailureCount>();
  const clientIds = new Map<string, FailureCount>();
  const enabled = settings.failuresBeforeBackoff > 0;

  const live = (counts: Map<string, FailureCount>, key: string, at: number) => {
    const count = counts.get(key);
    if (count === undefined) return undefined;
    if (count.windowEndsAt > at || count.blockedUntil > at) return count;
    counts.delete(key);
    return undefined;
  };
  const backOff = (count: FailureCount, at: number) => {
    const beyond = count.failures - settings.failuresBeforeBackoff;
    if (beyond < 0) return;
    // 2 ** beyond overflows to Infinity long after the cap; Math.min keeps it finite.
    const backoffMs = Math.min(settings.maxBackoffMs, settings.firstBackoffMs * 2 ** beyond);
    count.blockedUntil = at + backoffMs;
  };
  const fail = (counts: Map<string, FailureCount>, key: string, at: number) => {
    let count = live(counts, key, at);
    if (count === undefined) {
      if (counts.size >= settings.maxKeys) forgetOldest(counts);
      count = { failures: 0, windowEndsAt: at + settings.windowMs, blockedUntil: 0 };
      counts.set(key, count);
    }
    count.failures += 1;
    backOff(count, at);
    return count;
  };
  const refusal = (
    limit: PlatformAuthenticationRefusal['limit'],
    count: FailureCount,
    at: number,
  ): PlatformAuthenticationRefusal => {
    count.failures += 1;
    backOff(count, at);
    return { limit, retryAfterSeconds: Math.max(1, Math.ceil((count.blockedUntil - at) / 1000)) };
  };

  return {
    check(address, clientIdOf) {
      if (!enabled || addresses.size === 0) return undefined;
      const at = now();
      const failing = live(addresses, address, at);
      if (failing === undefined) return undefined;
      if (failing.blockedUntil > at) return refusal('address', failing, at);
      const clientId = clientIds.size === 0 ? undefined : clientIdOf();
      const attacked = clientId === undefined ? undefined : live(clientIds, clientId, at);
      if (attacked !== undefined && attacked.blockedUntil > at) {
        return refusal('client_id', attacked, at);
      }
      return undefined;
    },
    recordFailure(address, clientId) {
      if (!enabled) return;
      const at = now();
      fail(addresses, address, at);
      if (clientId !== undefined) fail(clientIds, clientId, at);
    },
  };
}

/**
 * Makes room for a new key: the oldest (insertion order) goes, in O(1) whatever the flood of
 * made-up ids or addresses; ended counts also go when they are next looked up.
 */
function forgetOldest(counts: Map<string, FailureCount>): void {
  const oldest = counts.keys().next();
  if (oldest.done !== true) counts.delete(oldest.value);
}
