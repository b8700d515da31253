import { fetchDiscoveryDocument, type DiscoveryDocument } from './discovery-document.js';

export type DiscoveryCache = {
  /** The issuer's discovery document, fetched at most once per TTL; failures are not kept. */
  get(issuer: string): Promise<DiscoveryDocument>;
  /** Drops the issuer's document (for example after its environment changed). */
  forget(issuer: string): void;
};

const defaultTtlMs = 5 * 60 * 1000;

/**
 * Discovery documents per issuer. Successful documents are kept for `ttlMs` (default five
 * minutes); concurrent gets for one issuer share one fetch; a failed fetch is not cached,
 * so the next get tries again.
 */
export function createDiscoveryCache(options: {
  timeoutMs: number;
  ttlMs?: number;
}): DiscoveryCache {
  const ttlMs = options.ttlMs ?? defaultTtlMs;
  const documents = new Map<string, { document: DiscoveryDocument; expiresAt: number }>();
  const pending = new Map<string, Promise<DiscoveryDocument>>();

  return {
    get(issuer) {
      const cached = documents.get(issuer);
      if (cached !== undefined && cached.expiresAt > Date.now()) {
        return Promise.resolve(cached.document);
      }
      const inFlight = pending.get(issuer);
      if (inFlight !== undefined) return inFlight;

      const fetching = fetchDiscoveryDocument(issuer, { timeoutMs: options.timeoutMs })
        .then((document) => {
          // A forget() during the fetch wins: the result is returned but not kept.
          if (pending.get(issuer) === fetching) {
            documents.set(issuer, { document, expiresAt: Date.now() + ttlMs });
          }
          return document;
        })
        .finally(() => {
          if (pending.get(issuer) === fetching) pending.delete(issuer);
        });
      pending.set(issuer, fetching);
      return fetching;
    },
    forget(issuer) {
      documents.delete(issuer);
      pending.delete(issuer);
    },
  };
}
