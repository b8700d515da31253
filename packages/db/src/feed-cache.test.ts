// FeedCache with the local change feed and a clock of the test's own.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { createLocalChangeFeed, type ChangeFeed } from './change-feed.js';
import { FeedCache } from './feed-cache.js';

const TTL_MS = 60_000;

/** A promise the test settles when it wants to. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A load that answers `${key}#<n>` for its n-th call, and counts its calls. */
function counting(key: string) {
  const load = Object.assign(
    () => {
      load.calls += 1;
      return Promise.resolve(`${key}#${load.calls}`);
    },
    { calls: 0 },
  );
  return load;
}

/**
 * Stands in for a Redis change feed whose subscription can be down (createRedisChangeFeed
 * while its connection is lost): `connected` is the test's to set, and, as the ChangeFeed
 * contract says, every listener is called when it changes.
 */
class SwitchableFeed implements ChangeFeed {
  connected = true;
  readonly #listeners = new Set<() => void>();

  setConnected(value: boolean): void {
    this.connected = value;
    for (const listener of this.#listeners) listener();
  }
  announce(): Promise<void> {
    for (const listener of this.#listeners) listener();
    return Promise.resolve();
  }
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('FeedCache', () => {
  let now: number;
  let feed: ChangeFeed;
  let cache: FeedCache<string>;
  const newCache = (options: { maxEntries?: number; feed?: ChangeFeed } = {}) =>
    new FeedCache<string>({
      feed: options.feed ?? feed,
      ttlMs: TTL_MS,
      maxEntries: options.maxEntries ?? 100,
      now: () => now,
    });

  beforeEach(() => {
    now = 1_700_000_000_000;
    feed = createLocalChangeFeed();
    cache = newCache();
  });

  it('keeps an answer until ttlMs has passed, then loads again', async () => {
    const load = counting('a');
    expect(await cache.get('a', load)).toBe('a#1');
    now += TTL_MS - 1;
    expect(await cache.get('a', load)).toBe('a#1');
    expect(load.calls).toBe(1);
    now += 1;
    expect(await cache.get('a', load)).toBe('a#2');
    expect(load.calls).toBe(2);
  });

  it('keeps each key apart', async () => {
    const a = counting('a');
    const b = counting('b');
    expect(await cache.get('a', a)).toBe('a#1');
    expect(await cache.get('b', b)).toBe('b#1');
    expect(await cache.get('a', a)).toBe('a#1');
    expect(cache.size).toBe(2);
  });

  it('shares one load among concurrent gets of one key', async () => {
    const answer = deferred<string>();
    let calls = 0;
    const load = () => {
      calls += 1;
      return answer.promise;
    };
    const first = cache.get('a', load);
    const second = cache.get('a', load);
    const third = cache.get('a', load);
    expect(calls).toBe(1);
    answer.resolve('shared');
    await expect(Promise.all([first, second, third])).resolves.toEqual([
      'shared',
      'shared',
      'shared',
    ]);
    expect(calls).toBe(1);
  });

  it('drops every entry when a change is announced', async () => {
    const a = counting('a');
    const b = counting('b');
    await cache.get('a', a);
    await cache.get('b', b);
    await feed.announce();
    expect(cache.size).toBe(0);
    expect(await cache.get('a', a)).toBe('a#2');
    expect(await cache.get('b', b)).toBe('b#2');
  });

  it('serves a load that was under way when a change was announced to its callers, but does not keep it', async () => {
    const stale = deferred<string>();
    const early = cache.get('a', () => stale.promise);
    const alsoEarly = cache.get('a', () => Promise.resolve('never called'));
    await feed.announce();

    // A get after the announcement does not join the load that may have read old data.
    const fresh = counting('a');
    const late = cache.get('a', fresh);
    expect(fresh.calls).toBe(1);

    stale.resolve('read before the change');
    expect(await early).toBe('read before the change');
    expect(await alsoEarly).toBe('read before the change');
    expect(await late).toBe('a#1');
    // What is kept is the answer loaded after the change.
    expect(await cache.get('a', fresh)).toBe('a#1');
    expect(fresh.calls).toBe(1);
  });

  it('does not keep a load under way during a change even when nothing asked since', async () => {
    const stale = deferred<string>();
    const early = cache.get('a', () => stale.promise);
    await feed.announce();
    stale.resolve('read before the change');
    expect(await early).toBe('read before the change');

    const load = counting('a');
    expect(await cache.get('a', load)).toBe('a#1');
    expect(load.calls).toBe(1);
  });

  it('does not keep a failure: concurrent callers share it, the next get loads again', async () => {
    const failure = deferred<string>();
    const first = cache.get('a', () => failure.promise);
    const second = cache.get('a', () => Promise.resolve('not called while the first is out'));
    failure.reject(new Error('registry unavailable'));
    await expect(first).rejects.toThrow('registry unavailable');
    await expect(second).rejects.toThrow('registry unavailable');
    expect(cache.size).toBe(0);

    const load = counting('a');
    expect(await cache.get('a', load)).toBe('a#1');
    expect(await cache.get('a', load)).toBe('a#1');
    expect(load.calls).toBe(1);
  });

  it('keeps the answer loaded after a change when the load from before it fails later', async () => {
    const stale = deferred<string>();
    const early = cache.get('a', () => stale.promise);
    await feed.announce();
    const fresh = counting('a');
    expect(await cache.get('a', fresh)).toBe('a#1');

    stale.reject(new Error('registry unavailable'));
    await expect(early).rejects.toThrow('registry unavailable');
    expect(await cache.get('a', fresh)).toBe('a#1');
    expect(fresh.calls).toBe(1);
  });

  it('ends an entry at expiresAt(value) when that comes before ttlMs', async () => {
    const load = counting('a');
    const start = now;
    const expiresAt = () => start + 1_000; // e.g. a credential that expires in a second
    expect(await cache.get('a', load, expiresAt)).toBe('a#1');
    now = start + 999;
    expect(await cache.get('a', load, expiresAt)).toBe('a#1');
    now = start + 1_000;
    expect(await cache.get('a', load, expiresAt)).toBe('a#2');
    expect(load.calls).toBe(2);
  });

  it('never keeps an entry past ttlMs, whatever expiresAt(value) says', async () => {
    const load = counting('a');
    const start = now;
    const expiresAt = () => start + 10 * TTL_MS;
    await cache.get('a', load, expiresAt);
    now = start + TTL_MS;
    expect(await cache.get('a', load, expiresAt)).toBe('a#2');
  });

  it('drops the oldest entry first beyond maxEntries', async () => {
    cache = newCache({ maxEntries: 2 });
    const a = counting('a');
    const b = counting('b');
    const c = counting('c');
    await cache.get('a', a);
    await cache.get('b', b);
    await cache.get('c', c);
    expect(cache.size).toBe(2);
    // b and c are kept; a, the oldest, was dropped.
    expect(await cache.get('b', b)).toBe('b#1');
    expect(await cache.get('c', c)).toBe('c#1');
    expect(await cache.get('a', a)).toBe('a#2');
    // Loading a again dropped b, now the oldest.
    expect(cache.size).toBe(2);
    expect(await cache.get('c', c)).toBe('c#1');
    expect(await cache.get('b', b)).toBe('b#2');
  });

  describe('while the feed is not connected', () => {
    let switchable: SwitchableFeed;
    beforeEach(() => {
      switchable = new SwitchableFeed();
      cache = newCache({ feed: switchable });
    });

    it('serves nothing it kept from before and keeps nothing', async () => {
      const load = counting('a');
      expect(await cache.get('a', load)).toBe('a#1');
      switchable.setConnected(false);

      expect(await cache.get('a', load)).toBe('a#2');
      expect(await cache.get('a', load)).toBe('a#3');
      expect(cache.size).toBe(0);
      // Not even concurrent gets share a load: each asks the service.
      await Promise.all([cache.get('a', load), cache.get('a', load)]);
      expect(load.calls).toBe(5);
      expect(cache.size).toBe(0);
    });

    it('caches again once connected, starting from nothing', async () => {
      const load = counting('a');
      await cache.get('a', load);
      switchable.setConnected(false);
      await cache.get('a', load);
      switchable.setConnected(true);

      expect(await cache.get('a', load)).toBe('a#3');
      expect(await cache.get('a', load)).toBe('a#3');
      expect(load.calls).toBe(3);
    });

    it('does not keep a load that was under way when the feed lost its connection', async () => {
      const stale = deferred<string>();
      const early = cache.get('a', () => stale.promise);
      switchable.setConnected(false);
      switchable.setConnected(true);
      stale.resolve('read while announcements may have been missed');
      expect(await early).toBe('read while announcements may have been missed');

      const load = counting('a');
      expect(await cache.get('a', load)).toBe('a#1');
      expect(load.calls).toBe(1);
    });
  });
});
