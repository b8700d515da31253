import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { GatewayError } from '@gateway/errors';
import { createRelyingParty, type RelyingParty } from '@gateway/oidc';
import type { AuthFlowDeps } from './auth-flow-deps.js';

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

/** One relying party (openid-client) per service: its Configurations are kept per environment. */
const relyingParties = new WeakMap<AuthFlowDeps['discovery'], RelyingParty>();

export function relyingPartyOf(deps: AuthFlowDeps): RelyingParty {
  let relyingParty = relyingParties.get(deps.discovery);
  if (relyingParty === undefined) {
    relyingParty = createRelyingParty({
      discovery: deps.discovery,
      jwks: deps.jwks,
      timeoutMs: deps.settings.identityTimeoutMs,
    });
    relyingParties.set(deps.discovery, relyingParty);
  }
  return relyingParty;
}

/**
 * The login's nonce, derived rather than kept (spec 2.8: the transaction holds only its
 * hash): SHA-256 over the login's PKCE verifier and its transaction id. The verifier is
 * 256 random bits that the transaction holds encrypted and no one but the gateway knows
 * before the code is exchanged, so the nonce is as unpredictable as a random one, and the
 * callback derives it again for openid-client's nonce check. One hash in place (an HMAC
 * costs a start several times as much). Base64url.
 */
export function nonceOf(codeVerifier: string, transactionId: string): string {
  return createHash('sha256')
    .update(codeVerifier, 'ascii')
    .update(`\nnonce:${transactionId}`, 'ascii')
    .digest('base64url');
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

/** Spec 2.5: what the gateway reads of a verified ID token; `sub` must not be empty. */
export function verifiedIdTokenOf(claims: JWTPayload): VerifiedIdToken {
  if (typeof claims.sub !== 'string' || claims.sub === '') {
    throw new GatewayError('ID_TOKEN_INVALID', 'The ID token has no subject.');
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    subject: claims.sub,
    nonce: text(claims.nonce) ?? '',
    email: text(claims.email),
    emailVerified: claims.email_verified === true,
    name: text(claims.name),
    picture: text(claims.picture),
    identitySessionId: text(claims.sid),
    claims,
  };
}
