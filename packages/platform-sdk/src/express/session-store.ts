import type { ExchangeResult } from '../gateway-types.js';

/** A value or a promise of it: stores may be synchronous (memory) or not (Redis, SQL). */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Where gatewayAuth keeps platform sessions server-side. The ids it passes are SHA-256
 * hashes of the session cookie values, so a leaked store does not hand out cookies; the
 * values hold the gatewayToken, so keep the store server-side. An entry must not be returned
 * after `expiresAt` (gatewayAuth checks as well).
 */
export type SessionStore = {
  get(id: string): MaybePromise<ExchangeResult | undefined>;
  set(id: string, value: ExchangeResult, expiresAt: Date): MaybePromise<void>;
  delete(id: string): MaybePromise<void>;
};

export type MemorySessionStoreOptions = {
  /** The clock, in epoch milliseconds. Default Date.now. */
  now?: () => number;
  /** Above this many entries, expired ones are swept on the next `set`. Default 10 000. */
  sweepAbove?: number;
};

/**
 * The default store: a Map in this process, each entry gone at its `expiresAt`. Sessions are
 * lost on restart and not shared between instances: use a shared store for more than one.
 */
export function createMemorySessionStore(options: MemorySessionStoreOptions = {}): SessionStore {
  const now = options.now ?? Date.now;
  const sweepAbove = options.sweepAbove ?? 10_000;
  const entries = new Map<string, { value: ExchangeResult; expiresAt: number }>();
  return {
    get(id) {
      const entry = entries.get(id);
      if (entry === undefined) return undefined;
      if (entry.expiresAt > now()) return entry.value;
      entries.delete(id);
      return undefined;
    },
    set(id, value, expiresAt) {
      if (entries.size >= sweepAbove) {
        const at = now();
        for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
      }
      entries.set(id, { value, expiresAt: expiresAt.getTime() });
    },
    delete(id) {
      entries.delete(id);
    },
  };
}
