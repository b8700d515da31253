import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { FeedCache, type ChangeFeed } from '@gateway/db';

type RegistryClient = Client<typeof RegistryService>;

/**
 * The registry answers every login step reads, and the session policy of a platform read at
 * every session use (introspection, exchange, cookie); nothing else is kept.
 */
const CACHED = new Set<string>([
  'prepareLogin',
  'getPlatform',
  'getEnvironmentClient',
  'getPlatformSessionPolicy',
]);

/** Answers are kept this long at most (a missed change announcement). */
export const REGISTRY_ANSWER_TTL_MS = 30_000;

/**
 * Start, callback, resume and logout ask the registry about the same few platforms and
 * environments over and over, and every session use asks for its platform's session policy.
 * This client keeps the answers of `prepareLogin`, `getPlatform`, `getEnvironmentClient` and
 * `getPlatformSessionPolicy` until the change feed announces a registry change (every change
 * is announced by the edge that made it, once its call settles) or 30 s pass. Failures are
 * not kept, an answer loaded while a change was announced is not kept, and while the feed is
 * disconnected every call goes to the registry.
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
