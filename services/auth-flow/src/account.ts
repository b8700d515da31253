import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AccountSchema, LocalUserSchema } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import { exercisablePermissions } from './platform-session-policy.js';
import { createSecurityAudit, type SecurityAudit } from './security-audit.js';
import { isUuid } from './store/auth-flow-store.js';
import { isUserActive } from './user-status-watch.js';
import { findUser, hasRole, PLATFORM_ADMIN, userStatus, type UserRow } from './users.js';
import { hashCredential } from './store/slot-tags.js';

type Account = MessageInitShape<typeof AccountSchema>;
type LocalUser = MessageInitShape<typeof LocalUserSchema>;

export type SessionCaller = {
  userId: string;
  sessionId: string;
  environmentKey: string;
  permissions: string[];
};

export type AccountService = {
  authenticateSession(sessionToken: string): Promise<SessionCaller>;
  getAccount(userId: string): Promise<Account>;
  /** Spec 4.8 GET /v1/users/me `localUser`: the local record behind the account view. */
  getLocalUser(userId: string): Promise<LocalUser>;
  deleteAccount(
    userId: string,
  ): Promise<{ revokedGatewaySessions: number; identityAccountSuspended: boolean }>;
};

const users = 'authflow.users';

/** Spec 2.5: where users change passwords and sign-in methods (issuer origin + `/account`). */
export function accountManagementUrlOf(issuer: string): string {
  return `${new URL(issuer).origin}/account`;
}

/** What the account operations read and write. */
type AccountDeps = AuthFlowDeps & {
  now: () => Date;
  environments: EnvironmentClients;
  securityAudit: SecurityAudit;
};

/**
 * Spec 2.5, 3.8 and 4.8: the signed-in user's own account. Cookie sessions are authenticated
 * here for the edge's user routes (spec 5 gatewayCookieAuth).
 */
export function createAccountService(
  deps: AuthFlowDeps,
  environments: EnvironmentClients,
): AccountService {
  const now = deps.now ?? (() => new Date());
  const account: AccountDeps = {
    ...deps,
    now,
    environments,
    securityAudit: createSecurityAudit(deps.registry, () => now().getTime()),
  };
  return {
    authenticateSession: (sessionToken) => authenticateSession(account, sessionToken),
    getAccount: (userId) => getAccount(account, userId),
    getLocalUser: (userId) => getLocalUser(account, userId),
    deleteAccount: (userId) => deleteAccount(account, userId),
  };
}

async function requireUser(deps: AccountDeps, userId: string): Promise<UserRow> {
  const user = isUuid(userId) ? await findUser(deps.db.knex, userId) : undefined;
  if (user === undefined) throw new GatewayError('NOT_FOUND', 'No such user.');
  return user;
}

async function authenticateSession(
  deps: AccountDeps,
  sessionToken: string,
): Promise<SessionCaller> {
  const unauthorized = () => new GatewayError('UNAUTHORIZED', 'The gateway session is not valid.');
  if (sessionToken === '') throw unauthorized();
  const session = await deps.store.getSession(hashCredential(sessionToken), deps.now().getTime());
  if (session === undefined) throw unauthorized();
  // Spec 3.8: a soft-deleted or suspended user's sessions authenticate nothing. The status
  // comes from the user-status watch while it is live, else it is read by primary key.
  const active = await isUserActive(deps.userStatus, session.userId, () =>
    userStatus(deps.db.knex, session.userId),
  );
  if (!active) throw unauthorized();
  // A deactivated or archived platform's sessions end; the session's snapshot is what it may
  // exercise, only through an admin console with ADMIN_POWER_CONSOLE_ONLY (docs/decisions.md).
  const permissions = await exercisablePermissions(deps.registry, session, deps.settings);
  if (permissions === undefined) throw unauthorized();
  if (permissions.length > 0) {
    await deps.securityAudit.adminCookieUsed({ ...session, permissions });
  }
  return {
    userId: session.userId,
    sessionId: session.id,
    environmentKey: session.environmentKey,
    permissions,
  };
}

async function getAccount(deps: AccountDeps, userId: string): Promise<Account> {
  const user = await requireUser(deps, userId);
  // The tier comes from the registry (cached), never from the identity service.
  const client = await deps.environments.get(user.environment_key);
  return {
    id: user.id,
    issuer: user.issuer,
    subject: user.subject,
    environment: { key: client.environmentKey, tier: client.tier },
    email: user.email,
    emailVerified: user.email_verified,
    status: user.status,
    accountManagementUrl: accountManagementUrlOf(user.issuer),
  };
}

async function getLocalUser(deps: AccountDeps, userId: string): Promise<LocalUser> {
  const user = await requireUser(deps, userId);
  const admin = await hasRole(deps.db.knex, user.id, PLATFORM_ADMIN);
  return {
    id: user.id,
    environmentKey: user.environment_key,
    deploymentEnvironment: user.issuer === deps.settings.deploymentIssuer,
    status: user.status,
    roles: admin ? [PLATFORM_ADMIN] : [],
    createdAt: new Date(user.created_at).toISOString(),
    ...(user.last_login_at === null
      ? {}
      : { lastLoginAt: new Date(user.last_login_at).toISOString() }),
  };
}

async function deleteAccount(
  deps: AccountDeps,
  userId: string,
): Promise<{ revokedGatewaySessions: number; identityAccountSuspended: boolean }> {
  const user = await requireUser(deps, userId);
  if (deps.identityService === undefined) {
    throw new GatewayError(
      'IDENTITY_SERVICE_NOT_CONFIGURED',
      'The identity service API is not configured (IDENTITY_SERVICE_URL, IDENTITY_SERVICE_KEY).',
    );
  }
  // Spec 4.8: the identity account first (this revokes identity sessions and tokens). A
  // failure (IDENTITY_UNAVAILABLE) propagates before anything changes locally. When the
  // identity service has no such user there is nothing left to suspend there, and the user's
  // request to delete the account is still honoured locally.
  const result = await deps.identityService.suspendUser(user.environment_key, user.subject);
  const at = deps.now();
  await deps.db
    .knex(users)
    .where({ id: user.id })
    .update({ status: 'SOFT_DELETED', updated_at: at });
  // After the status change: a session that outlives a failure here authenticates nothing, as
  // only ACTIVE users' sessions do.
  const revokedGatewaySessions = await deps.store.revokeUserSessions(user.id, at.getTime());
  return { revokedGatewaySessions, identityAccountSuspended: result === 'done' };
}
