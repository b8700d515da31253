// Spec 4.4: the exchange's answer. The login records what it will answer on the handoff
// (handoffSnapshotOf) and the exchange turns the redeemed handoff into the answer
// (exchangeAnswerOf); these two functions are the only places its fields are named in the
// auth-flow service. The stores keep the snapshot as it is (store/auth-flow-store.ts reads it
// back field by field).
import type { HandoffSnapshot, RedeemedHandoff } from './store/auth-flow-store.js';

/** The onboarding evaluation a login acts on (BootstrapMembership's status, spec 2.14). */
export type Evaluation = {
  platformStatus: string;
  platformMissingFields: string[];
  requirementVersion: number;
};

/** What the login knows when it issues a handoff. */
export type HandoffSnapshotSource = {
  transaction: { returnTo: string };
  user: { subject: string; issuer: string; picture: string | null };
  client: { environmentKey: string; tier: string };
  evaluation: Evaluation;
  /** The platform's `centralOnboardingEnabled`. */
  canCompleteCentrally: boolean;
};

/**
 * Spec 4.4: what the exchange of this handoff answers, as it stands at issuance. `onboarding`
 * is the membership status of 3.7 (the login records COMPLETE when nothing is missing;
 * IN_PROGRESS always comes with missing fields).
 */
export function handoffSnapshotOf(source: HandoffSnapshotSource): HandoffSnapshot {
  const { user, client, evaluation } = source;
  return {
    user: {
      sub: user.subject,
      issuer: user.issuer,
      ...(user.picture === null ? {} : { picture: user.picture }),
    },
    environment: { key: client.environmentKey, tier: client.tier },
    onboarding: {
      status: evaluation.platformStatus,
      requirementVersion: evaluation.requirementVersion,
      missingFields: evaluation.platformMissingFields,
      canCompleteCentrally: source.canCompleteCentrally,
    },
    returnTo: source.transaction.returnTo,
  };
}

/** A redeemed handoff whose session was live at the redeem. */
export type RedeemedWithSession = RedeemedHandoff & Required<Pick<RedeemedHandoff, 'session'>>;

/**
 * Spec 4.4: the answer as it stood at issuance (at most AUTH_HANDOFF_TTL_SECONDS ago), with
 * the session's expiry and permissions as they are at the redeem (spec 3.3). A handoff
 * implies a complete global profile: the login stops before it otherwise.
 */
export function exchangeAnswerOf(handoff: RedeemedWithSession, sessionToken: string) {
  const { snapshot, session } = handoff;
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
    profile: { status: 'COMPLETE', missingFields: [] as string[] },
    permissions: session.permissions,
    returnTo: snapshot.returnTo,
  };
}

export type ExchangeAnswer = ReturnType<typeof exchangeAnswerOf>;
