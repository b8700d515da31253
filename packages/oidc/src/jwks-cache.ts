import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';
import { GatewayError } from '@gateway/errors';
import { traceDependencyCall } from '@gateway/telemetry';

/** jose's fetch of a key set, in an `oidc.jwks` span; a failed fetch is an identity error. */
const tracedFetch = (url: string, init: RequestInit): Promise<Response> => {
  const { hostname, pathname } = new URL(url);
  return traceDependencyCall(
    'oidc.jwks',
    { 'server.address': hostname, 'url.path': pathname },
    () => fetch(url, init),
    () => 'identity',
  );
};

export type JwksCache = {
  /** The key set of one jwks_uri; the same instance (and fetched keys) for the same uri. */
  keySetFor(jwksUri: string): JWTVerifyGetKey;
};

/**
 * Remote JSON Web Key Sets, one per jwks_uri. jose fetches a set on first use, keeps it for
 * `cacheMaxAgeMs` (default ten minutes) and fetches it again when a token names a key it
 * does not hold (key rotation), at most once per `cooldownMs` (default 30 s). Every fetch
 * is bounded by `timeoutMs`.
 */
export function createJwksCache(options: {
  timeoutMs: number;
  cooldownMs?: number;
  cacheMaxAgeMs?: number;
}): JwksCache {
  const keySets = new Map<string, JWTVerifyGetKey>();
  return {
    keySetFor(jwksUri) {
      let keySet = keySets.get(jwksUri);
      if (keySet === undefined) {
        keySet = createRemoteJWKSet(new URL(jwksUri), {
          timeoutDuration: options.timeoutMs,
          cooldownDuration: options.cooldownMs ?? 30_000,
          cacheMaxAge: options.cacheMaxAgeMs ?? 10 * 60_000,
          [customFetch]: tracedFetch,
        });
        keySets.set(jwksUri, keySet);
      }
      return keySet;
    },
  };
}

/**
 * A key set that cannot be fetched (unreachable, slow, not a JWKS) is the provider's
 * failure, not the token's: IDENTITY_UNAVAILABLE. A set without the token's key is the
 * token's.
 */
export function keyFetchFailuresAsUnavailable(keys: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await keys(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys
      ) {
        throw error;
      }
      throw new GatewayError(
        'IDENTITY_UNAVAILABLE',
        "The identity provider's signing keys could not be fetched.",
        { cause: error },
      );
    }
  };
}
