import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';

type RegistryClient = Client<typeof RegistryService>;

/**
 * Registry calls that change nothing any cache keeps. Every other call, including
 * any added later, announces a change: a cache dropped once too often costs one lookup, a
 * change not announced serves a revoked key until the cache's TTL.
 */
const READS = new Set<string>([
  'listIdentityEnvironments',
  'getIdentityEnvironment',
  'validateIdentityEnvironment',
  'resolveIssuer',
  'listPlatforms',
  'getPlatform',
  'verifyPlatformCredential',
  'prepareLogin',
  'resolveReturnTo',
  'getEnvironmentClient',
  'listAuditRecords',
  'appendAuditRecord',
  'getCorsOrigins',
]);

/**
 * The registry client of the edge, announcing every change made through it once the call
 * settles, whether it succeeded or failed (a call that timed out may still have committed).
 * Every registry change comes through an edge's admin routes, so the caches of every process
 * (verified credentials here, login preparation in the auth-flow service, the CORS allowlist
 * and issuer resolutions) hear of it.
 */
export function announcingRegistryChanges(
  client: RegistryClient,
  announce: () => void,
): RegistryClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || READS.has(property) || typeof value !== 'function') {
        return value;
      }
      const call = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => call.apply(target, args).finally(announce);
    },
  });
}
