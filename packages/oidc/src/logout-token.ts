import { GatewayError } from '@gateway/errors';
import {
  errors,
  jwtVerify,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';

/** The `events` member that makes a JWT a logout token (Back-Channel Logout 1.0, 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The longest `sid`, `sub` and `jti` taken from a logout token, in characters. */
const MAX_CLAIM_LENGTH = 255;

/**
 * `typ` of a logout token (2.4: `logout+jwt` SHOULD be used; RFC 7515 4.1.9 compares media
 * types case-insensitively), or a plain `JWT` or none from providers that do not type them.
 * Any other type (`at+jwt`, `secevent+jwt`) is another kind of token.
 */
const LOGOUT_TOKEN_TYPES = new Set(['logout+jwt', 'application/logout+jwt', 'jwt']);

export type LogoutTokenRules = {
  /** The environment's issuer: `iss` must equal it exactly. */
  issuer: string;
  /** The gateway's client id in the environment: `aud` must name it, as for ID tokens. */
  clientId: string;
  /** The signature algorithms accepted (those of ID tokens). */
  algorithms: readonly string[];
  /** Seconds of leeway for `exp` and an `iat` in the future (that of ID tokens). */
  clockToleranceSeconds: number;
  /** How old (`iat`) a logout token may be, in seconds. */
  maxAgeSeconds: number;
  now?: Date;
};

/** What a valid logout token says: whose sessions end. At least one of `sid` and `sub`. */
export type VerifiedLogoutToken = {
  jti: string;
  /** `iat`, epoch seconds. */
  issuedAt: number;
  /** The identity provider's session (`sid`). */
  sessionId: string | undefined;
  subject: string | undefined;
};

/**
 * Back-Channel Logout 1.0, section 2.6: a logout token is valid when its signature verifies
 * against the environment's keys with an ID token algorithm, `iss`, `aud`, `azp` and `exp`
 * pass as they do for ID tokens (OIDC Core 3.1.3.7: `aud` names this client alone), `iat` is
 * present, not in the future and at most `maxAgeSeconds` old, `events` holds the
 * back-channel logout member as a JSON object, `sid` or `sub` (or both) is present, `nonce`
 * is absent and `jti` is present. Whether the `jti` was seen before is the caller's to
 * check. Every refusal is LOGOUT_TOKEN_INVALID, with a reason that names the failed check
 * and never a claim's value; keys that cannot be fetched are IDENTITY_UNAVAILABLE.
 */
export async function verifyLogoutToken(
  token: string,
  getKey: JWTVerifyGetKey,
  rules: LogoutTokenRules,
): Promise<VerifiedLogoutToken> {
  const now = rules.now ?? new Date();
  let claims: JWTPayload;
  let header: JWTHeaderParameters;
  try {
    ({ payload: claims, protectedHeader: header } = await jwtVerify(token, getKey, {
      issuer: rules.issuer,
      audience: rules.clientId,
      algorithms: [...rules.algorithms],
      clockTolerance: rules.clockToleranceSeconds,
      requiredClaims: ['iat', 'jti', 'events'],
      currentDate: now,
    }));
  } catch (error) {
    throw refusalOf(error);
  }
  // As for ID tokens (OIDC Core 3.1.3.7): the audience is this client alone, and an `azp`
  // present names it.
  const { aud, azp, iat } = claims;
  if (!(aud === rules.clientId || (Array.isArray(aud) && aud.length === 1))) {
    throw refused("The logout token's aud claim does not pass.");
  }
  if (azp !== undefined && azp !== rules.clientId) {
    throw refused("The logout token's azp claim does not pass.");
  }
  if (typeof iat !== 'number' || iat > now.getTime() / 1000 + rules.clockToleranceSeconds) {
    throw refused("The logout token's iat claim does not pass.");
  }
  checkTokenType(header);
  const issuedAt = claims.iat as number;
  const age = Math.floor(now.getTime() / 1000) - issuedAt;
  if (age > rules.maxAgeSeconds + rules.clockToleranceSeconds) {
    throw refused('The logout token is too old (iat).');
  }
  checkEvents(claims.events);
  // 2.4: a logout token never carries a nonce, so an ID token is never one.
  if (Object.hasOwn(claims, 'nonce')) throw refused('The logout token carries a nonce.');
  const jti = textClaim(claims, 'jti');
  const sessionId = textClaim(claims, 'sid');
  const subject = textClaim(claims, 'sub');
  if (jti === undefined) throw refused('The logout token has no jti.');
  if (sessionId === undefined && subject === undefined) {
    throw refused('The logout token names neither a session (sid) nor a subject (sub).');
  }
  return { jti, issuedAt, sessionId, subject };
}

function checkTokenType(header: JWTHeaderParameters): void {
  const { typ } = header;
  if (typ === undefined) return;
  if (typeof typ !== 'string' || !LOGOUT_TOKEN_TYPES.has(typ.toLowerCase())) {
    throw refused('The token is not a logout token (typ).');
  }
}

function checkEvents(events: unknown): void {
  if (!isJsonObject(events) || !isJsonObject(events[BACKCHANNEL_LOGOUT_EVENT])) {
    throw refused('The logout token does not carry the back-channel logout event (events).');
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A claim that is absent (undefined), or a non-empty string of bounded length. */
function textClaim(claims: JWTPayload, name: 'jti' | 'sid' | 'sub'): string | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MAX_CLAIM_LENGTH) {
    throw refused(`The logout token's ${name} claim is malformed.`);
  }
  return value;
}

/** jose's failures as the refusal of the token, with the check that failed. */
function refusalOf(error: unknown): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof errors.JWTExpired) return refused('The logout token has expired.');
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.reason === 'missing'
      ? refused(`The logout token has no ${error.claim} claim.`)
      : refused(`The logout token's ${error.claim} claim does not pass.`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return refused('The logout token is signed with an algorithm that is not accepted.');
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return refused('The logout token is signed with an unknown key.');
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return refused('The logout token signature is invalid.');
  }
  // Malformed compact serialisation, headers or claims, or a key unfit for the algorithm.
  if (error instanceof errors.JOSEError || error instanceof TypeError) {
    return refused('The logout token is malformed.');
  }
  return error;
}

function refused(reason: string): GatewayError {
  return new GatewayError('LOGOUT_TOKEN_INVALID', reason);
}
