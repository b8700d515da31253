import { GatewayPlatformError } from './errors.js';
import { readIntrospection } from './gateway-answers.js';
import { callGateway } from './gateway-request.js';
import type { IntrospectionResult } from './gateway-types.js';
import { introspectionCacheKey, type IntrospectionCache } from './introspection-cache.js';
import type { PlatformSettings } from './options.js';

/** Spec 4.5 and the edge's bound on `token`: longer or empty tokens name no session. */
const MAX_TOKEN_LENGTH = 512;

export type Introspector = {
  introspect(gatewayToken: string): Promise<IntrospectionResult>;
  /** Logout: drops the cached answer, and later calls do not join a request from before. */
  forget(gatewayToken: string): void;
  /** The user's other sessions ended: forgets all of the user's answers the same way. */
  forgetUserOf(gatewayToken: string): void;
};

/**
 * Spec 4.5 with its cache. Concurrent calls for the same token share one gateway request.
 * - 200 active: cached (introspection-cache.ts) and answered `active`;
 * - 200 inactive: `inactive`, not cached;
 * - 5xx, 429, network failure or time-out: `unavailable`, not cached (answer 503 and keep
 *   the user signed in);
 * - anything else (401 bad platform credentials, 400): thrown as GatewayPlatformError.
 */
export function createIntrospector(
  settings: PlatformSettings,
  cache: IntrospectionCache,
): Introspector {
  const inFlight = new Map<string, Promise<IntrospectionResult>>();

  async function askGateway(token: string): Promise<IntrospectionResult> {
    const ticket = cache.ticket();
    let body: unknown;
    try {
      body = await callGateway(settings, {
        path: '/v1/auth/introspect',
        operation: 'introspect',
        credentials: settings.introspectionKey,
        body: { token },
      });
    } catch (error) {
      if (error instanceof GatewayPlatformError && error.code === 'GATEWAY_UNAVAILABLE') {
        return { state: 'unavailable' };
      }
      throw error;
    }
    const session = readIntrospection(body);
    if (session === undefined) return { state: 'inactive' };
    cache.remember(token, session, ticket);
    return { state: 'active', session };
  }

  return {
    async introspect(gatewayToken) {
      if (gatewayToken === '' || gatewayToken.length > MAX_TOKEN_LENGTH) {
        return { state: 'inactive' };
      }
      const cached = cache.get(gatewayToken);
      if (cached !== undefined) return { state: 'active', session: cached };
      const key = introspectionCacheKey(gatewayToken);
      const pending = inFlight.get(key);
      if (pending !== undefined) return pending;
      const asking = askGateway(gatewayToken).finally(() => {
        if (inFlight.get(key) === asking) inFlight.delete(key);
      });
      inFlight.set(key, asking);
      return asking;
    },
    forget(gatewayToken) {
      cache.forget(gatewayToken);
      inFlight.delete(introspectionCacheKey(gatewayToken));
    },
    forgetUserOf(gatewayToken) {
      cache.forgetUserOf(gatewayToken);
      // Requests in flight are keyed by token, not by user: none is joined from now on.
      inFlight.clear();
    },
  };
}
