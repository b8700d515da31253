import { createHash } from 'node:crypto';
import { GatewayError } from '@gateway/errors';
import { jwtVerify, type JWTPayload } from 'jose';
import * as openid from 'openid-client';
import type { DiscoveryCache } from './discovery-cache.js';
import type { DiscoveryDocument } from './discovery-document.js';
import { allowsHttp, identityFetch } from './identity-fetch.js';
import type { JwksCache } from './jwks-cache.js';
import { keyFetchFailuresAsUnavailable, oidcFailure } from './oidc-error-codes.js';

/** Spec 4.2 step 3: the only ID token algorithms accepted. */
export const idTokenAlgorithms = ['EdDSA', 'RS256', 'ES256'];

/**
 * Seconds of leeway for the ID token's `exp`, `nbf` and an `iat` in the future (and a logout
 * token's).
 */
export const CLOCK_TOLERANCE_SECONDS = 5;

/** The gateway's client in one identity environment. */
export type RelyingPartyClient = { issuer: string; clientId: string; clientSecret: string };

export type AuthorizationRequest = {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  signUp: boolean;
};

/** What the identity provider's redirect brought back, and what the login expects of it. */
export type AuthorizationResponse = {
  redirectUri: string;
  code: string;
  state: string;
  iss: string | undefined;
  codeVerifier: string;
  expectedNonce: string;
};

export type RelyingParty = {
  /** Spec 4.1 step 7: the authorize URL (PKCE S256, state, nonce, `screen_hint=signup`). */
  authorizationUrl(client: RelyingPartyClient, request: AuthorizationRequest): Promise<string>;
  /**
   * Spec 4.2 steps 2 and 3: the authorization response checked (RFC 9207 `iss`), the code
   * exchanged with client_secret_basic and the PKCE verifier, and the ID token validated by
   * openid-client (iss, aud, azp, exp, iat, nonce, algorithm) and its signature verified by
   * jose against the environment's JWKS. Every failure is the spec's code (oidc-error-codes.ts).
   */
  completeAuthorization(
    client: RelyingPartyClient,
    response: AuthorizationResponse,
  ): Promise<{ idToken: string; claims: JWTPayload }>;
  /**
   * Spec 4.6: the provider's end-session URL with these parameters (and `client_id`), or
   * undefined when the provider advertises none or its discovery fails.
   */
  endSessionUrl(
    client: RelyingPartyClient,
    parameters: () => Record<string, string>,
  ): Promise<string | undefined>;
};

/**
 * openid-client as the gateway's relying party in every identity environment. Each
 * environment's Configuration is made once per discovery document (the discovery cache's
 * refetch or forget makes the next one) and client; the ID token's key set is jose's remote
 * set, kept per jwks_uri (jwks-cache.ts), so its keys are imported once.
 */
export function createRelyingParty(options: {
  discovery: DiscoveryCache;
  jwks: JwksCache;
  /** Bound on each call to the provider. */
  timeoutMs: number;
}): RelyingParty {
  const configurations = new WeakMap<DiscoveryDocument, Map<string, openid.Configuration>>();

  async function configurationOf(client: RelyingPartyClient) {
    const document = await options.discovery.get(client.issuer);
    let byClient = configurations.get(document);
    if (byClient === undefined) {
      byClient = new Map();
      configurations.set(document, byClient);
    }
    const key = `${client.clientId}\n${client.clientSecret}`;
    let configuration = byClient.get(key);
    if (configuration === undefined) {
      configuration = newConfiguration(document, client, options.timeoutMs);
      byClient.set(key, configuration);
    }
    return { document, configuration };
  }

  return {
    async authorizationUrl(client, request) {
      const { configuration } = await configurationOf(client);
      try {
        return openid.buildAuthorizationUrl(configuration, {
          client_id: client.clientId,
          redirect_uri: request.redirectUri,
          response_type: 'code',
          scope: 'openid profile email',
          state: request.state,
          nonce: request.nonce,
          code_challenge: pkceChallengeOf(request.codeVerifier),
          code_challenge_method: 'S256',
          ...(request.signUp ? { screen_hint: 'signup' } : {}),
        }).href;
      } catch (error) {
        throw oidcFailure('discovery', error, { issuer: client.issuer });
      }
    },

    async completeAuthorization(client, response) {
      const { document, configuration } = await configurationOf(client);
      const tokens = await grant(configuration, response, options.timeoutMs);
      const idToken = tokens.id_token;
      if (idToken === undefined) {
        throw new GatewayError('TOKEN_RESPONSE_INVALID', 'The token response has no ID token.');
      }
      return { idToken, claims: await verifySignature(idToken, document, client, options.jwks) };
    },

    async endSessionUrl(client, parameters) {
      let configuration: openid.Configuration;
      try {
        let document: DiscoveryDocument;
        ({ document, configuration } = await configurationOf(client));
        if (document.end_session_endpoint === undefined) return undefined;
      } catch (error) {
        if (error instanceof GatewayError) return undefined;
        throw error;
      }
      const query = { client_id: client.clientId, ...parameters() };
      try {
        return openid.buildEndSessionUrl(configuration, query).href;
      } catch {
        // An end_session_endpoint openid-client will not send a browser to (http elsewhere
        // than on a loopback issuer) is none.
        return undefined;
      }
    },
  };
}

function newConfiguration(
  document: DiscoveryDocument,
  client: RelyingPartyClient,
  timeoutMs: number,
): openid.Configuration {
  const configuration = new openid.Configuration(
    // The algorithms accepted are the spec's, whatever the provider advertises.
    { ...document, id_token_signing_alg_values_supported: idTokenAlgorithms },
    client.clientId,
    { [openid.clockTolerance]: CLOCK_TOLERANCE_SECONDS },
    openid.ClientSecretBasic(client.clientSecret),
  );
  configuration[openid.customFetch] = identityFetch;
  configuration.timeout = timeoutMs / 1000;
  if (allowsHttp(client.issuer)) openid.allowInsecureRequests(configuration);
  return configuration;
}

/** The callback URL as the provider sent the browser back to it. */
function callbackUrlOf(response: AuthorizationResponse): URL {
  const url = new URL(response.redirectUri);
  url.searchParams.set('code', response.code);
  url.searchParams.set('state', response.state);
  if (response.iss !== undefined) url.searchParams.set('iss', response.iss);
  return url;
}

async function grant(
  configuration: openid.Configuration,
  response: AuthorizationResponse,
  timeoutMs: number,
): Promise<openid.TokenEndpointResponse> {
  try {
    return await openid.authorizationCodeGrant(configuration, callbackUrlOf(response), {
      pkceCodeVerifier: response.codeVerifier,
      expectedState: response.state,
      expectedNonce: response.expectedNonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw oidcFailure(
      isAuthorizationResponseFailure(error) ? 'authorization-response' : 'code-grant',
      error,
      {
        timeoutMs,
      },
    );
  }
}

/**
 * openid-client checks the authorization response (state, RFC 9207 `iss`, `error`) before it
 * sends the code anywhere; what it refuses there names the response's parameters.
 */
function isAuthorizationResponseFailure(error: unknown): boolean {
  if (error instanceof openid.AuthorizationResponseError) return true;
  const inner = (error as { cause?: { cause?: unknown } } | null)?.cause?.cause;
  return typeof inner === 'object' && inner !== null && 'parameters' in inner;
}

/**
 * The ID token's signature, verified by jose with the environment's key set (its claims are
 * checked again on the way), and what the spec reads into OIDC Core 3.1.3.7 beyond
 * openid-client: the audience is this client alone, an `azp` present names it, and `iat` is
 * not in the future.
 */
async function verifySignature(
  idToken: string,
  document: DiscoveryDocument,
  client: RelyingPartyClient,
  jwks: JwksCache,
): Promise<JWTPayload> {
  if (document.jwks_uri === undefined) {
    throw new GatewayError(
      'IDENTITY_DISCOVERY_INVALID',
      'The identity provider does not advertise jwks_uri.',
    );
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      idToken,
      keyFetchFailuresAsUnavailable(jwks.keySetFor(document.jwks_uri)),
      {
        issuer: client.issuer,
        audience: client.clientId,
        algorithms: idTokenAlgorithms,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
      },
    ));
  } catch (error) {
    throw oidcFailure('id-token', error);
  }
  const { aud, azp, iat } = payload;
  const alone = aud === client.clientId || (Array.isArray(aud) && aud.length === 1);
  if (!alone || (azp !== undefined && azp !== client.clientId)) {
    throw new GatewayError('ID_TOKEN_INVALID', 'The ID token is meant for another client.');
  }
  // jose compares `iat` with the clock only under a maximum token age, which is not the spec's.
  if (typeof iat === 'number' && iat > Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS) {
    throw new GatewayError('ID_TOKEN_INVALID', 'The ID token is issued in the future.');
  }
  return payload;
}

/**
 * RFC 7636 4.2, S256: BASE64URL(SHA-256(ASCII(code_verifier))). openid-client's
 * calculatePKCECodeChallenge computes the same through WebCrypto, a hop to the thread pool that
 * costs every start far more than the hash itself; node:crypto hashes it in place.
 */
export function pkceChallengeOf(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}
