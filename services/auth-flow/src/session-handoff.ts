import { hashToken } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';
import { gatewayMetrics } from '@gateway/telemetry';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import { exercisablePermissions } from './platform-session-policy.js';
import type { HandoffRecord, SessionRecord } from './store/auth-flow-store.js';
import { isUserActive } from './user-status-watch.js';
import { findUser, userStatus } from './users.js';

export type SessionHandoff = ReturnType<typeof createSessionHandoff>;

/** Spec 4.4 (exchange) and 4.5 (introspect): what a platform backend asks of a login. */
export function createSessionHandoff(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const now = deps.now ?? (() => new Date());
  const { store, keyring } = deps;

  /**
   * Redeems a handoff code once. The code must have been sent to the callback the
   * presenting key serves (spec 4.4, 5: a key of one pair cannot redeem codes of another);
   * a code presented by the wrong key answers 404 and stays redeemable by the right one.
   * `permissions` are those the session can exercise (docs/decisions.md): empty unless the
   * platform is an admin console.
   */
  async function exchange(request: { code: string; platformKey: string; callbackUrl: string }) {
    try {
      const answer = await redeem(request);
      const permissions = await exercisablePermissions(deps.registry, {
        platformKey: answer.platformKey,
        createdAt: undefined,
        permissions: answer.permissions,
      });
      if (permissions === undefined) {
        throw new GatewayError('NOT_FOUND', 'Invalid, expired or used handoff code.');
      }
      gatewayMetrics.recordHandoffRedemption('redeemed');
      return { ...answer, permissions };
    } catch (error) {
      gatewayMetrics.recordHandoffRedemption('refused');
      throw error;
    }
  }

  async function redeem(request: { code: string; platformKey: string; callbackUrl: string }) {
    const at = now().getTime();
    const invalid = () => new GatewayError('NOT_FOUND', 'Invalid, expired or used handoff code.');
    // One atomic step: spends the code and reads its session, refused when the session was
    // revoked or expired since issuance (spec 3.2, 3.3), or when the code was sent to
    // another platform or callback (which leaves it unspent).
    const handoff = await store.redeemHandoff(hashToken(request.code), at, {
      platformKey: request.platformKey,
      callbackUrl: request.callbackUrl,
    });
    if (handoff === undefined) throw invalid();
    const sessionToken = keyring.decryptString(
      handoff.sessionTokenEncrypted,
      `handoff:${handoff.codeHash}`,
    );
    const { snapshot, session } = handoff;
    if (snapshot === undefined || session === undefined) {
      return redeemIssuedBefore(handoff, sessionToken, at);
    }
    // Spec 4.4, issue 8: the answer as it stood at issuance (at most AUTH_HANDOFF_TTL_SECONDS
    // ago), with the session's expiry and permissions as they are now (spec 3.3).
    return {
      session: {
        id: handoff.sessionId,
        expiresAt: new Date(session.expiresAt).toISOString(),
        gatewayToken: sessionToken,
      },
      user: { id: handoff.userId, ...snapshot.user },
      platformKey: handoff.platformKey,
      environment: snapshot.environment,
      onboarding: snapshot.onboarding,
      profile: { status: 'COMPLETE', missingFields: [] },
      permissions: session.permissions,
      returnTo: snapshot.returnTo,
    };
  }

  /**
   * A handoff issued before handoffs carried their answer (a deploy: for at most
   * AUTH_HANDOFF_TTL_SECONDS): everything is read as it is now.
   */
  async function redeemIssuedBefore(handoff: HandoffRecord, sessionToken: string, at: number) {
    const invalid = () => new GatewayError('NOT_FOUND', 'Invalid, expired or used handoff code.');
    const session = await store.getSession(hashToken(sessionToken), at);
    const user = await findUser(deps.db.knex, handoff.userId);
    const transaction = await store.getTransaction(handoff.transactionId);
    if (session === undefined || user === undefined || transaction === undefined) throw invalid();
    const [client, platform, { status: evaluation }] = await Promise.all([
      environments.get(session.environmentKey),
      deps.registry.getPlatform({ platformKey: handoff.platformKey }),
      deps.onboarding.evaluateOnboarding({ userId: user.id, platformKey: handoff.platformKey }),
    ]);
    // Spec 4.4: the membership status of 3.7 (the login recorded COMPLETE when nothing was
    // missing; IN_PROGRESS always comes with missing fields); a handoff implies a complete
    // global profile (the login stops before it otherwise).
    if (evaluation === undefined) throw new Error('onboarding answered no status');
    return {
      session: {
        id: session.id,
        expiresAt: new Date(session.expiresAt).toISOString(),
        gatewayToken: sessionToken,
      },
      user: {
        id: user.id,
        sub: user.subject,
        issuer: user.issuer,
        ...(user.picture === null ? {} : { picture: user.picture }),
      },
      platformKey: handoff.platformKey,
      environment: { key: client.environmentKey, tier: client.tier },
      onboarding: {
        status: evaluation.platformStatus,
        requirementVersion: evaluation.requirementVersion,
        missingFields: evaluation.platformMissingFields,
        canCompleteCentrally: platform.platform?.centralOnboardingEnabled ?? false,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
      permissions: session.permissions,
      returnTo: transaction.returnTo,
    };
  }

  /**
   * Spec 4.5: active only for a live session created by the caller's platform whose user is
   * active; everything else is the same `{ active: false }`.
   */
  async function introspect(request: { token: string; platformKey: string }) {
    const answer = await introspectToken(request);
    gatewayMetrics.recordIntrospectResult(answer.active);
    return answer;
  }

  async function introspectToken(request: { token: string; platformKey: string }) {
    const inactive = { active: false };
    const session = await store.getSession(hashToken(request.token), now().getTime());
    if (session === undefined || session.platformKey !== request.platformKey) return inactive;
    // A deactivated or archived platform's sessions are ended (docs/decisions.md).
    if ((await exercisablePermissions(deps.registry, session)) === undefined) return inactive;
    const { snapshot } = session;
    if (snapshot === undefined) return introspectSessionOfBefore(session, request.platformKey);
    // Issue 8: the answer comes from the session record, except the user's status (spec 4.5:
    // a suspended or deleted user's sessions are inactive at once): from the user-status
    // watch while it is live, with no query; otherwise read by primary key.
    // The e-mail is the one of this session's login, the tier the environment's then.
    const active = await isUserActive(deps.userStatus, session.userId, () =>
      userStatus(deps.db.knex, session.userId),
    );
    if (!active) return inactive;
    return {
      active: true,
      sessionId: session.id,
      expiresAt: new Date(session.expiresAt).toISOString(),
      platformKey: request.platformKey,
      user: {
        id: session.userId,
        issuer: snapshot.issuer,
        subject: snapshot.subject,
        email: snapshot.email,
        emailVerified: snapshot.emailVerified,
        status: 'ACTIVE',
      },
      environment: { key: session.environmentKey, tier: snapshot.environmentTier },
    };
  }

  /** A session created before sessions carried their snapshot: read the user and tier. */
  async function introspectSessionOfBefore(session: SessionRecord, platformKey: string) {
    const user = await findUser(deps.db.knex, session.userId);
    if (user === undefined || user.status !== 'ACTIVE') return { active: false };
    const client = await environments.get(session.environmentKey);
    return {
      active: true,
      sessionId: session.id,
      expiresAt: new Date(session.expiresAt).toISOString(),
      platformKey,
      user: {
        id: user.id,
        issuer: user.issuer,
        subject: user.subject,
        email: user.email,
        emailVerified: user.email_verified,
        status: user.status,
      },
      environment: { key: client.environmentKey, tier: client.tier },
    };
  }

  return { exchange, introspect };
}
