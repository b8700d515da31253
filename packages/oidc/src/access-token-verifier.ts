import { GatewayError } from '@gateway/errors';
import {
  decodeJwt,
  errors,
  jwtVerify,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import type { DiscoveryCache } from './discovery-cache.js';
import { keyFetchFailuresAsUnavailable, type JwksCache } from './jwks-cache.js';

/** What the gateway knows about the identity environment a token's `iss` names. */
export type IssuerInfo = {
  issuer: string;
  environmentKey: string;
  /** True for the deployment environment, the only one whose tokens carry permissions. */
  deployment: boolean;
  active: boolean;
};

export type VerifiedAccessToken = {
  kind: 'machine' | 'user';
  issuer: string;
  environmentKey: string;
  deployment: boolean;
  subject: string | undefined;
  /** `client_id`, else `azp`. */
  clientId: string | undefined;
  email: string | undefined;
  emailVerified: boolean;
  /** `scope`, split on spaces. */
  scopes: string[];
  /** `svc_platform`, else `platform_key`: limits a machine caller to one platform. */
  platformKey: string | undefined;
  claims: JWTPayload;
};

export type AccessTokenVerifier = {
  /**
   * Verifies a Bearer access token by the rules of spec section 5. Every token failure is
   * UNAUTHORIZED with a short reason; an identity provider that cannot be reached is
   * IDENTITY_UNAVAILABLE (and a broken discovery document IDENTITY_DISCOVERY_INVALID).
   * Permissions are not decided here.
   */
  verify(token: string): Promise<VerifiedAccessToken>;
};

export const accessTokenAlgorithms = ['EdDSA', 'RS256', 'ES256'];

export function createAccessTokenVerifier(options: {
  /** IDENTITY_ACCESS_TOKEN_AUDIENCE */
  audience: string;
  /** The environment of an (unverified) `iss`, or undefined when none has that issuer. */
  resolveIssuer(iss: string): Promise<IssuerInfo | undefined>;
  discovery: DiscoveryCache;
  jwks: JwksCache;
  /** Default 5. */
  clockToleranceSeconds?: number;
  /** ACCESS_TOKEN_MAX_LIFETIME_SECONDS: the longest `exp` - `iat` accepted (default 86400). */
  maxLifetimeSeconds?: number;
}): AccessTokenVerifier {
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  const maxLifetime = options.maxLifetimeSeconds ?? 86_400;

  return {
    async verify(token) {
      if (typeof token !== 'string' || token === '') throw unauthorized('No access token.');
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(token);
      } catch {
        throw unauthorized('The access token is not a JWT.');
      }
      if (typeof unverified.iss !== 'string' || unverified.iss === '') {
        throw unauthorized('The access token has no issuer.');
      }
      const environment = await options.resolveIssuer(unverified.iss);
      if (environment === undefined || !environment.active) {
        throw unauthorized("The access token's issuer is not an active identity environment.");
      }

      const document = await options.discovery.get(environment.issuer);
      if (document.jwks_uri === undefined) {
        throw new GatewayError(
          'IDENTITY_DISCOVERY_INVALID',
          "The identity provider's discovery document has no jwks_uri.",
          { details: { issuer: environment.issuer } },
        );
      }
      const keys = keyFetchFailuresAsUnavailable(options.jwks.keySetFor(document.jwks_uri));

      let claims: JWTPayload;
      let header: JWTHeaderParameters;
      try {
        ({ payload: claims, protectedHeader: header } = await verifyWithKeySet(token, keys, {
          algorithms: accessTokenAlgorithms,
          issuer: environment.issuer,
          audience: options.audience,
          clockTolerance,
          requiredClaims: ['exp'],
        }));
      } catch (error) {
        throw asGatewayError(error);
      }

      if (claims.nonce !== undefined) {
        throw unauthorized('ID tokens are not accepted as access tokens.');
      }
      checkTokenType(header);
      checkIssuedAtAndLifetime(claims, { clockTolerance, maxLifetime });
      return describe(claims, environment);
    },
  };
}

function describe(claims: JWTPayload, environment: IssuerInfo): VerifiedAccessToken {
  const subject = stringClaim(claims, 'sub');
  const email = stringClaim(claims, 'email');
  const azp = stringClaim(claims, 'azp');
  const clientId = stringClaim(claims, 'client_id') ?? azp;
  const machine =
    email === undefined &&
    (subject === undefined || subject === azp || subject === stringClaim(claims, 'client_id'));
  if (!machine && subject === undefined) {
    throw unauthorized('The access token has no subject.');
  }
  return {
    kind: machine ? 'machine' : 'user',
    issuer: environment.issuer,
    environmentKey: environment.environmentKey,
    deployment: environment.deployment,
    subject,
    clientId,
    email,
    emailVerified: claims.email_verified === true,
    scopes: scopesOf(claims),
    platformKey: stringClaim(claims, 'svc_platform') ?? stringClaim(claims, 'platform_key'),
    claims,
  };
}

/**
 * RFC 9068 section 2.1 (`at+jwt`, in full `application/at+jwt`); plain `JWT` or no `typ`
 * from providers that do not type their access tokens. Any other type (`logout+jwt`,
 * `secevent+jwt`, an ID token's) is another kind of token. Media types compare
 * case-insensitively (RFC 7515 section 4.1.9).
 */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt']);

function checkTokenType(header: JWTHeaderParameters): void {
  const { typ } = header;
  if (typ === undefined) return;
  if (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())) {
    throw unauthorized('The token is not an access token (typ).');
  }
}

/**
 * An `iat` in the future (beyond the clock tolerance) is refused, and so is a token that
 * lives longer than `maxLifetime` seconds from its `iat` (or from now when it has none): a
 * leaked long-lived token is not a credential here.
 */
function checkIssuedAtAndLifetime(
  claims: JWTPayload,
  limits: { clockTolerance: number; maxLifetime: number },
): void {
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp } = claims;
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat))) {
    throw unauthorized("The access token's iat claim is malformed.");
  }
  if (iat !== undefined && iat > now + limits.clockTolerance) {
    throw unauthorized('The access token is issued in the future.');
  }
  if (typeof exp !== 'number') throw unauthorized('The access token has no valid expiry.');
  if (exp - (iat ?? now) > limits.maxLifetime) {
    throw unauthorized('The access token lives longer than this gateway accepts.');
  }
}

function stringClaim(claims: JWTPayload, name: string): string | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw unauthorized(`The access token's ${name} claim is malformed.`);
  }
  return value;
}

function scopesOf(claims: JWTPayload): string[] {
  const { scope } = claims;
  if (scope === undefined) return [];
  if (typeof scope !== 'string') throw unauthorized("The access token's scope claim is malformed.");
  return scope.split(' ').filter((item) => item !== '');
}

/**
 * jwtVerify against a key set. When the token has no kid and several published keys fit
 * its algorithm, each is tried.
 */
async function verifyWithKeySet(
  token: string,
  keys: JWTVerifyGetKey,
  verifyOptions: JWTVerifyOptions,
): Promise<{ payload: JWTPayload; protectedHeader: JWTHeaderParameters }> {
  try {
    return await jwtVerify(token, keys, verifyOptions);
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    let failure: unknown = error;
    for await (const key of error) {
      try {
        return await jwtVerify(token, key, verifyOptions);
      } catch (next) {
        if (!(next instanceof errors.JWSSignatureVerificationFailed)) throw next;
        failure = next;
      }
    }
    throw failure;
  }
}

function asGatewayError(error: unknown): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof errors.JWTExpired) return unauthorized('The access token has expired.');
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'aud':
        return unauthorized('The access token is not meant for this gateway (audience).');
      case 'iss':
        return unauthorized("The access token's issuer does not match.");
      case 'nbf':
        return unauthorized('The access token is not valid yet.');
      case 'exp':
        return unauthorized('The access token has no valid expiry.');
      default:
        return unauthorized('The access token has invalid claims.');
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return unauthorized('The access token is signed with an algorithm that is not accepted.');
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return unauthorized('The access token is signed with an unknown key.');
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return unauthorized('The access token signature is invalid.');
  }
  if (error instanceof errors.JOSEError) return unauthorized('The access token is malformed.');
  return error;
}

function unauthorized(message: string): GatewayError {
  return new GatewayError('UNAUTHORIZED', message);
}
