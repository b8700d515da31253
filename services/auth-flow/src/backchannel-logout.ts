import { createHash } from 'node:crypto';
import { fromConnectError, GatewayError } from '@gateway/errors';
import {
  idTokenAlgorithms,
  idTokenClockToleranceSeconds,
  keyFetchFailuresAsUnavailable,
  verifyLogoutToken,
  type VerifiedLogoutToken,
} from '@gateway/oidc';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import type { EnvironmentClient } from './identity-provider-client.js';
import { createSecurityAudit } from './security-audit.js';
import { findUserBySubject } from './users.js';

/**
 * How old a logout token may be (its `iat`), in seconds, beyond the clock tolerance of ID
 * tokens. Its `jti` is remembered as long, so a replay is refused either way.
 */
export const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;

export type BackchannelLogout = ReturnType<typeof createBackchannelLogout>;

/**
 * OpenID Connect Back-Channel Logout 1.0, received by the gateway (an addition to the spec):
 * an identity environment posts a logout token when a user's identity session ends, and the
 * gateway sessions signed in with it end too. A platform's next introspection of one of them
 * answers `active: false` (spec 4.5: revoked).
 */
export function createBackchannelLogout(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const now = deps.now ?? (() => new Date());
  const audit = createSecurityAudit(deps.registry);

  /**
   * Verifies the token (section 2.6, logout-token.ts in @gateway/oidc) against the keys of the
   * environment named by the endpoint's path, spends its `jti` (a replay is refused and ends
   * nothing), then revokes the live sessions it names (section 2.7) and writes one
   * `auth.backchannel_logout` audit record. A token that names no live session is accepted
   * all the same: the identity provider gets its 200 (section 2.8).
   */
  async function logout(request: { environmentKey: string; logoutToken: string }) {
    const client = await activeEnvironment(environments, request.environmentKey);
    const at = now();
    const token = await verifyLogoutToken(request.logoutToken, await keysOf(deps, client), {
      issuer: client.issuer,
      clientId: client.clientId,
      algorithms: idTokenAlgorithms,
      clockToleranceSeconds: idTokenClockToleranceSeconds,
      maxAgeSeconds: LOGOUT_TOKEN_MAX_AGE_SECONDS,
      now: at,
    });
    const rememberUntil =
      (token.issuedAt + LOGOUT_TOKEN_MAX_AGE_SECONDS + idTokenClockToleranceSeconds) * 1000;
    if (
      !(await deps.store.acceptOnce(replayKeyOf(client.issuer, token), rememberUntil, at.getTime()))
    ) {
      throw new GatewayError('LOGOUT_TOKEN_INVALID', 'The logout token was used before (jti).');
    }
    const user =
      token.subject === undefined
        ? undefined
        : await findUserBySubject(deps.db.knex, client.issuer, token.subject);
    // A `sub` with no local user names no gateway session, with a `sid` or without.
    const revoked =
      token.subject !== undefined && user === undefined
        ? []
        : await deps.store.revokeIdentitySessions(
            client.environmentKey,
            {
              ...(token.sessionId === undefined ? {} : { identitySessionId: token.sessionId }),
              ...(user === undefined ? {} : { userId: user.id }),
            },
            at.getTime(),
          );
    await audit.backchannelLogout({
      environmentKey: client.environmentKey,
      identitySessionId: token.sessionId,
      subject: token.subject,
      userId: user?.id,
      sessionIds: revoked.map((session) => session.id).sort(),
    });
    return { revokedGatewaySessions: revoked.length };
  }

  return { logout };
}

/**
 * The environment of the endpoint's path. One that does not exist, or is not active, is the
 * identity provider's error (400), not an outage: no logout token of it is accepted.
 */
async function activeEnvironment(
  environments: EnvironmentClients,
  environmentKey: string,
): Promise<EnvironmentClient> {
  let client: EnvironmentClient;
  try {
    client = await environments.get(environmentKey);
  } catch (error) {
    // The registry's answer across Connect: an environment that does not exist.
    if (fromConnectError(error).code === 'IDENTITY_ENVIRONMENT_NOT_CONFIGURED') {
      throw unknownEnvironment();
    }
    throw error;
  }
  if (!client.active) throw unknownEnvironment();
  return client;
}

function unknownEnvironment(): GatewayError {
  return new GatewayError(
    'IDENTITY_ENVIRONMENT_NOT_FOUND',
    'No active identity environment has this key.',
  );
}

/** The environment's signing keys, from its discovery document's `jwks_uri` (both cached). */
async function keysOf(deps: AuthFlowDeps, client: EnvironmentClient) {
  const document = await deps.discovery.get(client.issuer);
  if (typeof document.jwks_uri !== 'string') {
    throw new GatewayError(
      'IDENTITY_DISCOVERY_INVALID',
      'The identity provider does not advertise jwks_uri.',
    );
  }
  return keyFetchFailuresAsUnavailable(deps.jwks.keySetFor(document.jwks_uri));
}

/** A `jti` is unique per issuer (section 2.4); the store keeps a fixed-length hash of both. */
function replayKeyOf(issuer: string, token: VerifiedLogoutToken): string {
  return `logout-jti:${createHash('sha256').update(`${issuer}\0${token.jti}`).digest('base64url')}`;
}
