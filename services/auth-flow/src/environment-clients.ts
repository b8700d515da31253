import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { EnvironmentClient } from './identity-provider-client.js';

/**
 * The gateway's client in each identity environment, asked of the registry. The registry
 * client the service is given keeps these answers until a registry change is announced
 * (registry-answers-cache.ts), so every caller sees an environment deactivated or its secret
 * changed at once; nothing is kept here besides. The secret stays in this process's memory
 * only.
 */
export function createEnvironmentClients(registry: Client<typeof RegistryService>) {
  return {
    async get(environmentKey: string): Promise<EnvironmentClient> {
      const answer = await registry.getEnvironmentClient({ environmentKey });
      return {
        environmentKey: answer.environmentKey,
        issuer: answer.issuer,
        tier: answer.tier,
        active: answer.active,
        deployment: answer.deployment,
        clientId: answer.clientId,
        clientSecret: answer.clientSecret,
        postLogoutRedirectUri: answer.postLogoutRedirectUri,
      };
    },
  };
}

export type EnvironmentClients = ReturnType<typeof createEnvironmentClients>;
