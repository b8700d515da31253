import type { MessageInitShape } from '@bufbuild/protobuf';
import type { RequestContext, UserSessionSchema } from '@gateway/contracts';
import { GatewayError, isGatewayError } from '@gateway/errors';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { createSecurityAudit, type SecurityAudit } from './security-audit.js';
import { isUuid, type SessionRecord } from './store/auth-flow-store.js';
import { findUser, type UserRow } from './users.js';

type UserSession = MessageInitShape<typeof UserSessionSchema>;

/**
 * A user's own gateway sessions (GET and DELETE /v1/account/sessions) and an admin's view of
 * them (GET and DELETE /v1/admin/users/{userId}/sessions). Only live sessions are shown or
 * ended, and only the named user's: a session id of another user answers NOT_FOUND and ends
 * nothing. No token or token hash ever leaves.
 */
export type UserSessions = {
  listAccountSessions(userId: string): Promise<UserSession[]>;
  /** NOT_FOUND when the id names no live session of the user. */
  revokeAccountSession(userId: string, sessionId: string): Promise<void>;
  /** Ends every live session of the user but `keepSessionId`; answers how many. */
  revokeOtherAccountSessions(userId: string, keepSessionId: string | undefined): Promise<number>;
  /** NOT_FOUND for an unknown user. */
  listUserSessions(userId: string): Promise<UserSession[]>;
  /** NOT_FOUND for an unknown user or no such live session of it; one audit record. */
  revokeUserSession(
    context: RequestContext | undefined,
    userId: string,
    sessionId: string,
  ): Promise<void>;
};

type SessionsDeps = Pick<AuthFlowDeps, 'db' | 'store' | 'registry'> & {
  now: () => number;
  securityAudit: SecurityAudit;
};

export function createUserSessions(deps: AuthFlowDeps): UserSessions {
  const now = deps.now ?? (() => new Date());
  const sessions: SessionsDeps = {
    db: deps.db,
    store: deps.store,
    registry: deps.registry,
    now: () => now().getTime(),
    securityAudit: createSecurityAudit(deps.registry, () => now().getTime()),
  };
  return {
    listAccountSessions: (userId) => listSessions(sessions, userId),
    revokeAccountSession: async (userId, sessionId) => {
      await revokeSession(sessions, userId, sessionId);
    },
    revokeOtherAccountSessions: (userId, keepSessionId) =>
      sessions.store.revokeUserSessions(userId, sessions.now(), keepSessionId),
    listUserSessions: async (userId) => {
      const user = await requireUser(sessions, userId);
      return listSessions(sessions, user.id);
    },
    revokeUserSession: (context, userId, sessionId) =>
      revokeUserSession(sessions, context, userId, sessionId),
  };
}

const noSuchSession = () => new GatewayError('NOT_FOUND', 'No such session.');

async function requireUser(deps: SessionsDeps, userId: string): Promise<UserRow> {
  const user = isUuid(userId) ? await findUser(deps.db.knex, userId) : undefined;
  if (user === undefined) throw new GatewayError('NOT_FOUND', 'No such user.');
  return user;
}

async function listSessions(deps: SessionsDeps, userId: string): Promise<UserSession[]> {
  const sessions = await deps.store.listUserSessions(userId, deps.now());
  const names = await platformNames(deps, sessions);
  return sessions.map((session) => toUserSession(session, names));
}

async function revokeSession(
  deps: SessionsDeps,
  userId: string,
  sessionId: string,
): Promise<SessionRecord> {
  const revoked = await deps.store.revokeUserSession(userId, sessionId, deps.now());
  if (revoked === undefined) throw noSuchSession();
  return revoked;
}

async function revokeUserSession(
  deps: SessionsDeps,
  context: RequestContext | undefined,
  userId: string,
  sessionId: string,
): Promise<void> {
  const user = await requireUser(deps, userId);
  const session = await revokeSession(deps, user.id, sessionId);
  await deps.securityAudit.userSessionRevoked(context, { id: user.id, email: user.email }, session);
}

/**
 * The registry's name of each platform the sessions came from: one getPlatform per platform,
 * answered from the auth-flow's registry answers cache (registry-answers-cache.ts) once
 * asked. A platform the registry does not know is named by its key.
 */
async function platformNames(
  deps: SessionsDeps,
  sessions: readonly SessionRecord[],
): Promise<Map<string, string>> {
  const keys = new Set<string>();
  for (const session of sessions) if (session.platformKey !== null) keys.add(session.platformKey);
  const entries = await Promise.all(
    [...keys].map(async (platformKey): Promise<[string, string]> => {
      try {
        const { platform } = await deps.registry.getPlatform({ platformKey });
        return [platformKey, platform?.displayName ?? platformKey];
      } catch (error) {
        if (isGatewayError(error) && error.code === 'NOT_FOUND') return [platformKey, platformKey];
        throw error;
      }
    }),
  );
  return new Map(entries);
}

function toUserSession(session: SessionRecord, names: ReadonlyMap<string, string>): UserSession {
  const { platformKey } = session;
  return {
    id: session.id,
    ...(platformKey === null
      ? {}
      : { platform: { key: platformKey, name: names.get(platformKey) ?? platformKey } }),
    environment: { key: session.environmentKey, tier: session.snapshot.environmentTier },
    createdAt: new Date(session.createdAt).toISOString(),
    expiresAt: new Date(session.expiresAt).toISOString(),
  };
}
