import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { FeedCache, type ChangeFeed } from '@gateway/db';

type RegistryClient = Client<typeof RegistryService>;

/** The registry answers every login step reads; nothing else is kept. */
const CACHED = new Set<string>(['prepareLogin', 'getPlatform', 'getEnvironmentClient']);

/** Answers are kept this long at most (a missed change announcement). */
export const REGISTRY_ANSWER_TTL_MS = 30_000;

/**
 * Issue 8: start, callback, resume and logout ask the registry about the same few platforms
 * and environments over and over. This client keeps the answers of `prepareLogin`,
 * `getPlatform` and `getEnvironmentClient` until the change feed announces a registry change
 * (every change is announced by the edge that made it) or 30 s pass. Failures are not kept,
 * and while the feed is disconnected every call goes to the registry.
 */
export function cachingRegistryAnswers(
  client: RegistryClient,
  feed: ChangeFeed,
  ttlMs: number = REGISTRY_ANSWER_TTL_MS,
): RegistryClient {
  const cache = new FeedCache<unknown>({ feed, ttlMs, maxEntries: 10_000 });
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !CACHED.has(property) || typeof value !== 'function') {
        return value;
      }
      const call = value as (request: unknown, ...rest: unknown[]) => Promise<unknown>;
      return (request: unknown, ...rest: unknown[]) =>
        cache.get(`${property} ${JSON.stringify(request)}`, () =>
          call.call(target, request, ...rest),
        );
    },
  });
}
