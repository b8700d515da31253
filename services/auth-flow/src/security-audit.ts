import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type {
  AppendAuditRecordRequestSchema,
  RegistryService,
  RequestContext,
} from '@gateway/contracts';

type AuditRequest = MessageInitShape<typeof AppendAuditRecordRequestSchema>;
type Registry = Pick<Client<typeof RegistryService>, 'appendAuditRecord'>;

const ADMIN_COOKIE_WINDOW_MS = 60 * 60 * 1000;
const ADMIN_COOKIE_SESSIONS_KEPT = 10_000;
const MAX_AUDITED_SESSION_IDS = 50;

/** What a callback had learnt when it ended: the transaction's platform, then the user. */
export type SignInAttempt = {
  platformId?: string;
  platformKey?: string;
  environmentKey?: string;
  userId?: string;
};

export type SignInSucceeded = {
  userId: string;
  sessionId: string;
  platformId: string;
  platformKey: string;
  environmentKey: string;
  outcome: string;
};

/** The session a logout or an admin cookie use is about. */
type AuditedSession = {
  id: string;
  userId: string;
  platformKey: string | null;
  environmentKey: string;
};

type RevokedUser = { id: string; email: string; environmentKey: string };

/** A logout token accepted from an identity environment, and what it ended. */
export type BackchannelLogoutEvent = {
  environmentKey: string;
  /** The token's `sid`, when it names the identity provider's session. */
  identitySessionId: string | undefined;
  /** The token's `sub`, when it names a subject. */
  subject: string | undefined;
  /** The local user `sub` names, when there is one. */
  userId: string | undefined;
  /** The gateway sessions it revoked. */
  sessionIds: readonly string[];
};
type RevocationOutcome = { revokedGatewaySessions: number; identitySessions: string };

/**
 * Security events of the login flow, written to the registry's audit log (docs/operations.md,
 * Security events). Each is one insert through AppendAuditRecord; the session and
 * transaction live in the auth-flow store, so no transaction spans both. Details carry
 * identifiers and outcomes, never a token, code or secret.
 */
export function createSecurityAudit(registry: Registry, now: () => number = Date.now) {
  const append = async (request: AuditRequest): Promise<void> => {
    await registry.appendAuditRecord(request);
  };
  const adminCookieUses = new Map<string, number>();
  return {
    /** Awaited: a sign-in is answered only once its record is written. */
    signInSucceeded: (event: SignInSucceeded) => append(signInSucceededRecord(event)),

    /**
     * A callback refused after its `state` named a live transaction: at most one record per
     * started login, since the transaction is consumed first. A failure to record does not
     * replace the refusal the browser gets.
     */
    async signInRefused(attempt: SignInAttempt, errorCode: string): Promise<void> {
      try {
        await append(signInRefusedRecord(attempt, errorCode));
      } catch {
        // The refusal itself is counted in gateway.signin.outcomes either way.
      }
    },

    logout: (session: AuditedSession) => append(logoutRecord(session)),

    /** One record per accepted logout token, also when it ended no session. */
    backchannelLogout: (event: BackchannelLogoutEvent) => append(backchannelLogoutRecord(event)),

    /**
     * A cookie session carrying admin permissions (its snapshot, platform-session-policy.ts) was
     * authenticated. Recorded at most once per session and hour by this process, so a
     * console's many calls do not each add a row.
     */
    async adminCookieUsed(
      session: AuditedSession & { permissions: readonly string[] },
    ): Promise<void> {
      if (!firstUseInWindow(adminCookieUses, session.id, now())) return;
      await append(adminCookieUsedRecord(session));
    },

    /** The admin revocation of one user's sessions (spec 4.15), naming the admin. */
    sessionsRevoked: (
      context: RequestContext | undefined,
      user: RevokedUser,
      outcome: RevocationOutcome,
    ) => append(sessionsRevokedRecord(context, user, outcome)),

    /** An admin ended one gateway session of a user, naming the admin. */
    userSessionRevoked: (
      context: RequestContext | undefined,
      user: { id: string; email: string },
      session: AuditedSession,
    ) => append(userSessionRevokedRecord(context, user, session)),
  };
}

export type SecurityAudit = ReturnType<typeof createSecurityAudit>;

/**
 * Whether a use of the session at `at` starts a new window (and records it). The map is
 * bounded, oldest first out.
 */
function firstUseInWindow(uses: Map<string, number>, sessionId: string, at: number): boolean {
  const last = uses.get(sessionId);
  if (last !== undefined && at - last < ADMIN_COOKIE_WINDOW_MS) return false;
  uses.delete(sessionId);
  uses.set(sessionId, at);
  if (uses.size > ADMIN_COOKIE_SESSIONS_KEPT) {
    const oldest = uses.keys().next().value;
    if (oldest !== undefined) uses.delete(oldest);
  }
  return true;
}

function signInSucceededRecord(event: SignInSucceeded): AuditRequest {
  return {
    context: { actor: { kind: 'user', subject: event.userId } },
    kind: 'auth.sign_in_succeeded',
    targetType: 'platform',
    targetId: event.platformId,
    targetKey: event.platformKey,
    details: {
      userId: event.userId,
      sessionId: event.sessionId,
      environmentKey: event.environmentKey,
      next: event.outcome,
    },
  };
}

function signInRefusedRecord(attempt: SignInAttempt, errorCode: string): AuditRequest {
  return {
    context: {
      actor:
        attempt.userId === undefined
          ? { kind: 'system', subject: 'auth-flow' }
          : { kind: 'user', subject: attempt.userId },
    },
    kind: 'auth.sign_in_refused',
    targetType: 'platform',
    targetId: attempt.platformId ?? '',
    targetKey: attempt.platformKey ?? '',
    details: {
      errorCode,
      environmentKey: attempt.environmentKey ?? '',
      ...(attempt.userId === undefined ? {} : { userId: attempt.userId }),
    },
  };
}

function logoutRecord(session: AuditedSession): AuditRequest {
  return {
    context: { actor: { kind: 'user', subject: session.userId } },
    kind: 'auth.logout',
    targetType: 'platform',
    targetId: '',
    targetKey: session.platformKey ?? '',
    details: {
      userId: session.userId,
      sessionId: session.id,
      environmentKey: session.environmentKey,
    },
  };
}

function backchannelLogoutRecord(event: BackchannelLogoutEvent): AuditRequest {
  return {
    context: {
      actor: { kind: 'system', subject: 'auth-flow', environmentKey: event.environmentKey },
    },
    kind: 'auth.backchannel_logout',
    targetType: 'identity_environment',
    targetId: '',
    targetKey: event.environmentKey,
    details: {
      ...(event.identitySessionId === undefined
        ? {}
        : { identitySessionId: event.identitySessionId }),
      ...(event.subject === undefined ? {} : { subject: event.subject }),
      ...(event.userId === undefined ? {} : { userId: event.userId }),
      revokedGatewaySessions: event.sessionIds.length,
      // A bounded record: the first sessions by id, the count says how many there were.
      sessionIds: event.sessionIds.slice(0, MAX_AUDITED_SESSION_IDS),
    },
  };
}

function adminCookieUsedRecord(
  session: AuditedSession & { permissions: readonly string[] },
): AuditRequest {
  return {
    context: { actor: { kind: 'user', subject: session.userId } },
    kind: 'admin.cookie_used',
    targetType: 'platform',
    targetId: '',
    targetKey: session.platformKey ?? '',
    details: {
      userId: session.userId,
      sessionId: session.id,
      environmentKey: session.environmentKey,
      permissions: [...session.permissions],
    },
  };
}

function sessionsRevokedRecord(
  context: RequestContext | undefined,
  user: RevokedUser,
  outcome: RevocationOutcome,
): AuditRequest {
  return {
    ...(context === undefined ? {} : { context }),
    kind: 'session.revoked',
    targetType: 'user',
    targetId: user.id,
    targetKey: user.email,
    details: {
      environmentKey: user.environmentKey,
      revokedGatewaySessions: outcome.revokedGatewaySessions,
      identitySessions: outcome.identitySessions,
    },
  };
}

function userSessionRevokedRecord(
  context: RequestContext | undefined,
  user: { id: string; email: string },
  session: AuditedSession,
): AuditRequest {
  return {
    ...(context === undefined ? {} : { context }),
    kind: 'user_session.revoked',
    targetType: 'user',
    targetId: user.id,
    targetKey: user.email,
    details: {
      sessionId: session.id,
      environmentKey: session.environmentKey,
      platformKey: session.platformKey ?? '',
    },
  };
}
