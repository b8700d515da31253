import type { ChangeFeed } from './change-feed.js';

export type FeedCacheOptions = {
  feed: ChangeFeed;
  /** Longest an answer is kept, even when no change is announced (a missed announcement). */
  ttlMs: number;
  /** Beyond this many entries the oldest are dropped first. */
  maxEntries: number;
  now?: () => number;
};

type Entry<V> = { value: Promise<V>; expiresAt: number };

/**
 * Answers of another service kept for a short while and dropped whenever the change feed
 * announces a change. Concurrent loads of one key share one call. A load that was
 * under way when a change was announced serves its caller but is not kept: it may have read
 * the data before the change. Failures are never kept. While the feed is not connected
 * nothing is served from or kept in the cache.
 */
export class FeedCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #options: FeedCacheOptions;
  readonly #now: () => number;
  #generation = 0;

  constructor(options: FeedCacheOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    options.feed.subscribe(() => this.clear());
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#generation += 1;
    this.#entries.clear();
  }

  /**
   * The kept answer for `key`, or `load()`'s (kept until `ttlMs`, or until the earlier time
   * `expiresAt` gives for the value).
   */
  get(key: string, load: () => Promise<V>, expiresAt?: (value: V) => number): Promise<V> {
    if (!this.#options.feed.connected) return load();
    const now = this.#now();
    const cached = this.#entries.get(key);
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached.value;
      this.#entries.delete(key);
    }
    const generation = this.#generation;
    const value = load();
    const entry: Entry<V> = { value, expiresAt: now + this.#options.ttlMs };
    if (this.#entries.size >= this.#options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, entry);
    const forget = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    value.then((answer) => {
      if (generation !== this.#generation) return;
      if (expiresAt !== undefined) entry.expiresAt = Math.min(entry.expiresAt, expiresAt(answer));
    }, forget);
    return value;
  }
}
