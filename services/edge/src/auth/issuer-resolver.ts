import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { IssuerInfo } from '@gateway/oidc';

export type IssuerResolver = {
  /** The environment of `issuer`, or undefined when no environment has that issuer. */
  resolve(issuer: string): Promise<IssuerInfo | undefined>;
  /** Forget every cached answer (after a registry change made through this edge). */
  invalidate(): void;
};

type Entry = { expiresAt: number; answer: Promise<IssuerInfo | undefined> };

/**
 * Resolves token issuers through the registry (spec 5 rule 1), caching each answer for
 * `ttlMs` so the Bearer hot path costs one registry call per issuer per TTL. Unknown
 * issuers are cached too (any caller can put any `iss` in a token), and the cache holds at
 * most `maxEntries` issuers, dropping the oldest first. Concurrent lookups of one issuer
 * share one call; a failed call is not cached.
 */
export function createIssuerResolver(
  registry: Client<typeof RegistryService>,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): IssuerResolver {
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 1000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();

  async function lookUp(issuer: string): Promise<IssuerInfo | undefined> {
    const answer = await registry.resolveIssuer({ issuer });
    if (!answer.found) return undefined;
    return {
      environmentKey: answer.environmentKey,
      active: answer.active,
      deployment: answer.deployment,
      issuer: answer.issuer,
    };
  }

  return {
    resolve(issuer) {
      const cached = cache.get(issuer);
      if (cached !== undefined && cached.expiresAt > now()) return cached.answer;
      cache.delete(issuer);
      while (cache.size >= maxEntries) {
        const oldest = cache.keys().next();
        if (oldest.done === true) break;
        cache.delete(oldest.value);
      }
      const entry: Entry = { expiresAt: now() + ttlMs, answer: lookUp(issuer) };
      cache.set(issuer, entry);
      entry.answer.catch(() => {
        if (cache.get(issuer) === entry) cache.delete(issuer);
      });
      return entry.answer;
    },
    invalidate() {
      cache.clear();
    },
  };
}
