import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { FeedCache, type ChangeFeed } from '@gateway/db';
import type { IssuerInfo } from '@gateway/oidc';

export type IssuerResolver = {
  /** The environment of `issuer`, or undefined when no environment has that issuer. */
  resolve(issuer: string): Promise<IssuerInfo | undefined>;
};

/**
 * Resolves token issuers through the registry (spec 5 rule 1), keeping each answer for
 * `ttlMs` and until the change feed announces a registry change, so the Bearer hot path costs
 * one registry call per issuer. Unknown issuers are kept too (any caller can put any `iss` in
 * a token), at most `maxEntries` issuers, the oldest dropped first. Concurrent lookups of one
 * issuer share one call; a failed call is not kept.
 */
export function createIssuerResolver(
  registry: Client<typeof RegistryService>,
  options: { feed: ChangeFeed; ttlMs?: number; maxEntries?: number },
): IssuerResolver {
  const cache = new FeedCache<IssuerInfo | undefined>({
    feed: options.feed,
    ttlMs: options.ttlMs ?? 30_000,
    maxEntries: options.maxEntries ?? 1000,
  });

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

  return { resolve: (issuer) => cache.get(issuer, () => lookUp(issuer)) };
}
