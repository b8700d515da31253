import { errors, jwtVerify } from 'jose';

/** What the gateway may ask of the internal users API (the `act` claim). */
export type ServiceAction = 'users.suspend' | 'users.sessions.revoke';

/** `act=users.*` allows every user action. */
const anyUserAction = 'users.*';
export const serviceTokenIssuer = 'svc-gateway';
export const serviceTokenAudience = 'svc-identity';
/** spec 4.15: the token lives 60 seconds; one that claims to live longer is refused. */
export const maxServiceTokenLifetimeSeconds = 60;
const clockToleranceSeconds = 5;

/**
 * Checks the gateway's Bearer token for the internal users API (spec 4.15): an HS256 JWT
 * signed with IDENTITY_SERVICE_KEY (its UTF-8 bytes), `iss=svc-gateway`, `aud=svc-identity`,
 * `env` equal to the environment in the path, `act` the action or `users.*`, `iat` and
 * `exp` at most 60 seconds apart. Returns why it is refused, or undefined when it is good.
 */
export async function serviceTokenProblem(
  authorization: string | undefined,
  serviceKey: Uint8Array,
  expected: { environmentKey: string; action: ServiceAction },
): Promise<string | undefined> {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization ?? '');
  if (match?.[1] === undefined) return 'a Bearer token is required';
  let payload;
  try {
    ({ payload } = await jwtVerify(match[1], serviceKey, {
      algorithms: ['HS256'],
      issuer: serviceTokenIssuer,
      audience: serviceTokenAudience,
      requiredClaims: ['iat', 'exp', 'env', 'act'],
      clockTolerance: clockToleranceSeconds,
    }));
  } catch (error) {
    if (error instanceof errors.JOSEError) return `the token is not valid (${error.code})`;
    throw error;
  }
  const { iat, exp, env, act } = payload;
  if (typeof iat !== 'number' || typeof exp !== 'number') return 'iat and exp are required';
  if (exp - iat > maxServiceTokenLifetimeSeconds) {
    return `the token lives longer than ${maxServiceTokenLifetimeSeconds} seconds`;
  }
  if (iat > Date.now() / 1000 + clockToleranceSeconds) return 'the token is issued in the future';
  if (env !== expected.environmentKey) return 'the token is for another environment';
  if (act !== expected.action && act !== anyUserAction) {
    return `the token does not allow ${expected.action}`;
  }
  return undefined;
}
