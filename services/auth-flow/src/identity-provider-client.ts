import { createHash } from 'node:crypto';
import { errors as joseErrors, type JWTPayload } from 'jose';
import { GatewayError } from '@gateway/errors';
import {
  postForm,
  verifyJwt,
  type DiscoveryCache,
  type DiscoveryDocument,
  type JwksCache,
} from '@gateway/oidc';
import { traceDependencyCall } from '@gateway/telemetry';

/** Spec 4.2 step 3: the only ID token algorithms accepted. */
export const idTokenAlgorithms = ['EdDSA', 'RS256', 'ES256'];

/** Seconds of clock skew allowed on an ID token's `exp` and `iat` (and a logout token's). */
export const ID_TOKEN_CLOCK_TOLERANCE_SECONDS = 5;

export type EnvironmentClient = {
  environmentKey: string;
  issuer: string;
  tier: string;
  active: boolean;
  deployment: boolean;
  clientId: string;
  clientSecret: string;
  postLogoutRedirectUri: string | undefined;
};

/** RFC 7636 S256 code challenge of a verifier. */
export function codeChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export function requireEndpoint(
  document: DiscoveryDocument,
  name: 'authorization_endpoint' | 'token_endpoint',
): string {
  const value = document[name];
  if (typeof value !== 'string' || value === '') {
    throw new GatewayError(
      'IDENTITY_DISCOVERY_INVALID',
      `The identity provider does not advertise ${name}.`,
    );
  }
  return value;
}

/** Spec 4.1 step 7: the authorize request. */
export function buildAuthorizeUrl(
  document: DiscoveryDocument,
  request: {
    clientId: string;
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string;
    signUp: boolean;
  },
): string {
  const url = new URL(requireEndpoint(document, 'authorization_endpoint'));
  url.searchParams.set('client_id', request.clientId);
  url.searchParams.set('redirect_uri', request.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'openid profile email');
  url.searchParams.set('state', request.state);
  url.searchParams.set('nonce', request.nonce);
  url.searchParams.set('code_challenge', request.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (request.signUp) url.searchParams.set('screen_hint', 'signup');
  return url.href;
}

/**
 * RFC 9207: an authorization response's `iss` must name the issuer the login was started
 * with whenever it is present, and must be present when discovery advertises
 * `authorization_response_iss_parameter_supported` (a response without it may come from
 * another provider: a mix-up). Refused as an issuer failure, 401 ID_TOKEN_INVALID (spec 7).
 */
export function checkAuthorizationResponseIssuer(
  document: DiscoveryDocument,
  issuer: string,
  iss: string | undefined,
): void {
  if (iss === undefined) {
    if (document.authorization_response_iss_parameter_supported !== true) return;
    throw new GatewayError(
      'ID_TOKEN_INVALID',
      'The authorization response does not name its issuer.',
    );
  }
  if (iss !== issuer) {
    throw new GatewayError('ID_TOKEN_INVALID', 'The authorization response names another issuer.');
  }
}

/** RFC 6749 2.3.1: client_secret_basic encodes id and secret before joining them. */
function basicAuthorization(clientId: string, clientSecret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/**
 * Spec 4.2 step 2: exchanges the code at the environment's token endpoint with
 * client_secret_basic and the PKCE verifier. A refusal by the provider is 401
 * AUTHORIZATION_CODE_EXCHANGE_FAILED; an unreachable or failing provider 503
 * IDENTITY_UNAVAILABLE; a response without an ID token 401 TOKEN_RESPONSE_INVALID.
 * The access token of the response is ignored. The request goes through node:http(s) with a
 * keep-alive agent (postForm), bounded by `timeoutMs` as a whole. Runs in an `oidc.token`
 * span (endpoint host and path only); an unavailable provider counts as an `identity`
 * dependency error.
 */
export async function exchangeAuthorizationCode(
  document: DiscoveryDocument,
  client: EnvironmentClient,
  request: { code: string; redirectUri: string; codeVerifier: string; timeoutMs: number },
): Promise<string> {
  const tokenEndpoint = requireEndpoint(document, 'token_endpoint');
  const endpoint = URL.canParse(tokenEndpoint) ? new URL(tokenEndpoint) : undefined;
  return traceDependencyCall(
    'oidc.token',
    endpoint === undefined
      ? {}
      : { 'server.address': endpoint.hostname, 'url.path': endpoint.pathname },
    () => requestIdToken(tokenEndpoint, client, request),
    (error) =>
      error instanceof GatewayError && error.code === 'IDENTITY_UNAVAILABLE'
        ? 'identity'
        : undefined,
  );
}

async function requestIdToken(
  tokenEndpoint: string,
  client: EnvironmentClient,
  request: { code: string; redirectUri: string; codeVerifier: string; timeoutMs: number },
): Promise<string> {
  const response = await postForm(
    tokenEndpoint,
    {
      grant_type: 'authorization_code',
      code: request.code,
      redirect_uri: request.redirectUri,
      code_verifier: request.codeVerifier,
    },
    {
      authorization: basicAuthorization(client.clientId, client.clientSecret),
      accept: 'application/json',
    },
    request.timeoutMs,
  );
  if (!response.answered) {
    throw new GatewayError(
      'IDENTITY_UNAVAILABLE',
      'The identity provider token endpoint is unreachable.',
      {
        cause: response.cause,
      },
    );
  }
  // JSON `null` is no answer either.
  const body = (response.body ?? undefined) as Record<string, unknown> | undefined;
  if (response.status >= 500 || body === undefined) {
    throw new GatewayError('IDENTITY_UNAVAILABLE', 'The identity provider token endpoint failed.');
  }
  if (response.status < 200 || response.status > 299) {
    const error = typeof body.error === 'string' ? body.error : 'unknown';
    throw new GatewayError(
      'AUTHORIZATION_CODE_EXCHANGE_FAILED',
      'The identity provider refused the code.',
      {
        details: { error: error.slice(0, 100) },
      },
    );
  }
  if (typeof body.id_token !== 'string' || body.id_token === '') {
    throw new GatewayError('TOKEN_RESPONSE_INVALID', 'The token response has no ID token.');
  }
  return body.id_token;
}

export type VerifiedIdToken = {
  subject: string;
  nonce: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  picture: string | undefined;
  /** The `sid` claim (Back-Channel Logout 1.0 §2.1): the provider's session, when a string. */
  identitySessionId: string | undefined;
  claims: JWTPayload;
};

/**
 * Spec 4.2 step 3: the ID token is verified against the environment's JWKS: issuer exactly
 * equal, audience the environment's client alone, an `azp` naming that client, an `iat` not
 * in the future, algorithm EdDSA, RS256 or ES256, `sub` present.
 * The nonce is returned for the caller, which holds only its hash. The signature is checked
 * with node:crypto on this thread (verifyJwt), not through WebCrypto's thread pool.
 */
export async function verifyIdToken(
  idToken: string,
  document: DiscoveryDocument,
  client: EnvironmentClient,
  jwks: JwksCache,
): Promise<VerifiedIdToken> {
  if (typeof document.jwks_uri !== 'string') {
    throw new GatewayError(
      'IDENTITY_DISCOVERY_INVALID',
      'The identity provider does not advertise jwks_uri.',
    );
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await verifyJwt(idToken, jwks.keySetFor(document.jwks_uri), {
      issuer: client.issuer,
      audience: client.clientId,
      // OIDC Core 3.1.3.7: an `azp` present must name this client.
      authorizedParty: client.clientId,
      algorithms: idTokenAlgorithms,
      clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['sub', 'exp', 'iat'],
    }));
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    if (isJwksUnavailable(error)) {
      throw new GatewayError(
        'IDENTITY_UNAVAILABLE',
        'The identity provider keys are unreachable.',
        { cause: error },
      );
    }
    throw new GatewayError('ID_TOKEN_INVALID', 'The ID token is invalid.', { cause: error });
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new GatewayError('ID_TOKEN_INVALID', 'The ID token has no subject.');
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    subject: payload.sub,
    nonce: text(payload.nonce) ?? '',
    email: text(payload.email),
    emailVerified: payload.email_verified === true,
    name: text(payload.name),
    picture: text(payload.picture),
    identitySessionId: text(payload.sid),
    claims: payload,
  };
}

// Duck-typed, not `instanceof Error`: errors thrown by fetch may come from another realm.
function isJwksUnavailable(error: unknown): boolean {
  if (error instanceof joseErrors.JWKSTimeout) return true;
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  return (
    name === 'JWKSTimeout' ||
    (typeof message === 'string' && /fetch failed|ECONNREFUSED|Expected 200 OK/.test(message))
  );
}

export type { DiscoveryCache };
