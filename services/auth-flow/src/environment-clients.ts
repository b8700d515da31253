import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { EnvironmentClient } from './identity-provider-client.js';

/**
 * The gateway's client in each identity environment, asked of the registry. Answers are
 * kept for a short while: exchange and introspect need an environment's tier on every call.
 * The secret stays in this process's memory only.
 */
export function createEnvironmentClients(registry: Client<typeof RegistryService>, ttlMs = 30_000) {
  const cache = new Map<string, { expiresAt: number; client: Promise<EnvironmentClient> }>();
  return {
    get(environmentKey: string, options: { fresh?: boolean } = {}): Promise<EnvironmentClient> {
      const cached = cache.get(environmentKey);
      if (!options.fresh && cached !== undefined && cached.expiresAt > Date.now())
        return cached.client;
      const client = registry.getEnvironmentClient({ environmentKey }).then((answer) => ({
        environmentKey: answer.environmentKey,
        issuer: answer.issuer,
        tier: answer.tier,
        active: answer.active,
        deployment: answer.deployment,
        clientId: answer.clientId,
        clientSecret: answer.clientSecret,
        postLogoutRedirectUri: answer.postLogoutRedirectUri,
      }));
      cache.set(environmentKey, { expiresAt: Date.now() + ttlMs, client });
      client.catch(() => cache.delete(environmentKey));
      return client;
    },
  };
}

export type EnvironmentClients = ReturnType<typeof createEnvironmentClients>;
