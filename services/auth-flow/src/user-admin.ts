import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AdminUserSchema, RequestContext } from '@gateway/contracts';
import { GatewayError, isGatewayError } from '@gateway/errors';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { createSecurityAudit, type SecurityAudit } from './security-audit.js';
import { isUuid } from './store/auth-flow-store.js';
import { PLATFORM_ADMIN, type UserRow } from './users.js';

type AdminUser = MessageInitShape<typeof AdminUserSchema>;
type UserWithRole = UserRow & { is_admin: boolean };

const users = 'authflow.users';
const roles = 'authflow.user_roles';

export type ListUsersInput = {
  search: string | undefined;
  page: number;
  pageSize: number;
  environmentKey: string | undefined;
};

export type ListUsersAnswer = {
  items: AdminUser[];
  total: number;
  page: number;
  pageSize: number;
};

export type UserAdmin = {
  listUsers(input: ListUsersInput): Promise<ListUsersAnswer>;
  grantPlatformAdmin(context: RequestContext | undefined, userId: string): Promise<AdminUser>;
  revokePlatformAdmin(context: RequestContext | undefined, userId: string): Promise<AdminUser>;
  revokeUserSessions(
    context: RequestContext | undefined,
    userId: string,
  ): Promise<{ revokedGatewaySessions: number; identitySessionsRevoked: boolean }>;
};

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** LIKE pattern of a literal substring: `\`, `%` and `_` match themselves. */
export function likeSubstring(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function iso(value: Date | string | null): string | undefined {
  if (value === null) return undefined;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** Who changed a role, for `user_roles.granted_by`. */
function actorName(context: RequestContext | undefined): string {
  const actor = context?.actor;
  if (actor === undefined) return 'admin';
  const who = actor.subject !== '' ? actor.subject : actor.clientId;
  return `${actor.kind}:${who}`;
}

/** What the user admin reads and writes. */
type AdminDeps = {
  knex: AuthFlowDeps['db']['knex'];
  store: AuthFlowDeps['store'];
  registry: AuthFlowDeps['registry'];
  identityService: AuthFlowDeps['identityService'];
  /** IDENTITY_ISSUER: tells deployment users from others (spec 2.6). */
  deploymentIssuer: string;
  securityAudit: SecurityAudit;
  now: () => Date;
};

/** Spec 4.12 user admin: the listing, the platform_admin role and session revocation. */
export function createUserAdmin(deps: AuthFlowDeps): UserAdmin {
  const admin: AdminDeps = {
    knex: deps.db.knex,
    store: deps.store,
    registry: deps.registry,
    identityService: deps.identityService,
    deploymentIssuer: deps.settings.deploymentIssuer,
    securityAudit: createSecurityAudit(deps.registry),
    now: deps.now ?? (() => new Date()),
  };
  return {
    listUsers: (input) => listUsers(admin, input),
    grantPlatformAdmin: (context, userId) => grantPlatformAdmin(admin, context, userId),
    revokePlatformAdmin: (context, userId) => revokePlatformAdmin(admin, context, userId),
    revokeUserSessions: (context, userId) => revokeUserSessions(admin, context, userId),
  };
}

function toAdminUser(deps: AdminDeps, user: UserRow, admin: boolean): AdminUser {
  const lastLoginAt = iso(user.last_login_at);
  return {
    id: user.id,
    issuer: user.issuer,
    subject: user.subject,
    environmentKey: user.environment_key,
    deploymentEnvironment: user.issuer === deps.deploymentIssuer,
    email: user.email,
    emailVerified: user.email_verified,
    status: user.status,
    roles: admin ? [PLATFORM_ADMIN] : [],
    ...(lastLoginAt === undefined ? {} : { lastLoginAt }),
    createdAt: iso(user.created_at) ?? '',
  };
}

/** The users, each with whether it holds platform_admin (`is_admin`). */
function withRole(knex: AdminDeps['knex']) {
  return knex(users).select(
    `${users}.*`,
    knex.raw(
      `exists (select 1 from ${roles} r where r.user_id = ${users}.id and r.role = ?) as is_admin`,
      [PLATFORM_ADMIN],
    ),
  );
}

async function requireUser(deps: AdminDeps, userId: string): Promise<UserWithRole> {
  const user = isUuid(userId)
    ? ((await withRole(deps.knex).where(`${users}.id`, userId).first()) as UserWithRole | undefined)
    : undefined;
  if (user === undefined) throw new GatewayError('NOT_FOUND', 'No such user.');
  return user;
}

async function auditRoleChange(
  deps: AdminDeps,
  context: RequestContext | undefined,
  kind: 'user_role.granted' | 'user_role.revoked',
  user: UserRow,
): Promise<void> {
  await deps.registry.appendAuditRecord({
    ...(context === undefined ? {} : { context }),
    kind,
    targetType: 'user',
    targetId: user.id,
    targetKey: user.email,
    details: { role: PLATFORM_ADMIN, environmentKey: user.environment_key },
  });
}

async function listUsers(deps: AdminDeps, input: ListUsersInput): Promise<ListUsersAnswer> {
  const { knex } = deps;
  const page = Math.max(1, Math.trunc(input.page) || 1);
  const pageSize = Math.min(
    MAX_PAGE_SIZE,
    Math.max(1, Math.trunc(input.pageSize) || DEFAULT_PAGE_SIZE),
  );
  const filtered = <Q extends ReturnType<typeof knex>>(query: Q): Q => {
    if (input.search !== undefined && input.search !== '') {
      void query.whereRaw(`${users}.email ilike ? escape '\\'`, [likeSubstring(input.search)]);
    }
    if (input.environmentKey !== undefined && input.environmentKey !== '') {
      void query.where(`${users}.environment_key`, input.environmentKey);
    }
    return query;
  };
  const counted = (await filtered(knex(users)).count({ n: '*' }).first()) as
    { n: string | number } | undefined;
  const rows = (await filtered(withRole(knex))
    .orderByRaw(`${users}.last_login_at desc nulls last, ${users}.id asc`)
    .limit(pageSize)
    .offset((page - 1) * pageSize)) as UserWithRole[];
  return {
    items: rows.map((row) => toAdminUser(deps, row, row.is_admin)),
    total: Number(counted?.n ?? 0),
    page,
    pageSize,
  };
}

async function grantPlatformAdmin(
  deps: AdminDeps,
  context: RequestContext | undefined,
  userId: string,
): Promise<AdminUser> {
  const user = await requireUser(deps, userId);
  if (user.issuer !== deps.deploymentIssuer) {
    throw new GatewayError(
      'ROLE_REQUIRES_DEPLOYMENT_ENVIRONMENT',
      'platform_admin can only be granted to users of the deployment environment.',
      { details: { environmentKey: user.environment_key } },
    );
  }
  // Spec 3.3: the user's sessions are unchanged; the role counts from the next login.
  const inserted = (await deps
    .knex(roles)
    .insert({
      user_id: user.id,
      role: PLATFORM_ADMIN,
      granted_by: actorName(context),
      granted_at: deps.now(),
    })
    .onConflict(['user_id', 'role'])
    .ignore()
    .returning('user_id')) as unknown[];
  if (inserted.length > 0) await auditRoleChange(deps, context, 'user_role.granted', user);
  return toAdminUser(deps, user, true);
}

async function revokePlatformAdmin(
  deps: AdminDeps,
  context: RequestContext | undefined,
  userId: string,
): Promise<AdminUser> {
  const user = await requireUser(deps, userId);
  const removed = await deps.knex.transaction(async (trx) => {
    // Every admin row is locked, so of two concurrent revokes of the last two admins the
    // second counts again after the first commits, and is refused.
    const admins = (await trx(roles)
      .where({ role: PLATFORM_ADMIN })
      .select('user_id')
      .forUpdate()) as { user_id: string }[];
    if (!admins.some((row) => row.user_id === user.id)) return false;
    if (admins.length <= 1) {
      throw new GatewayError('LAST_PLATFORM_ADMIN', 'The last platform admin cannot be removed.');
    }
    await trx(roles).where({ user_id: user.id, role: PLATFORM_ADMIN }).delete();
    return true;
  });
  // Spec 3.3: the live sessions lose their permissions at once. Also on a repeated revoke, so
  // a retry after a failed strip completes it.
  await deps.store.stripUserPermissions(user.id);
  if (removed) await auditRoleChange(deps, context, 'user_role.revoked', user);
  return toAdminUser(deps, user, false);
}

async function revokeUserSessions(
  deps: AdminDeps,
  context: RequestContext | undefined,
  userId: string,
): Promise<{ revokedGatewaySessions: number; identitySessionsRevoked: boolean }> {
  const user = await requireUser(deps, userId);
  const revokedGatewaySessions = await deps.store.revokeUserSessions(user.id, deps.now().getTime());
  const details = { revokedGatewaySessions };
  let identitySessions = 'unknown';
  try {
    const result = await revokeIdentitySessions(deps, user, details);
    identitySessions = result;
    return { revokedGatewaySessions, identitySessionsRevoked: result === 'done' };
  } catch (error) {
    identitySessions = isGatewayError(error) ? error.code : 'INTERNAL_ERROR';
    throw error;
  } finally {
    // The gateway sessions are gone whatever the identity service answered.
    await deps.securityAudit.sessionsRevoked(
      context,
      { id: user.id, email: user.email, environmentKey: user.environment_key },
      { revokedGatewaySessions, identitySessions },
    );
  }
}

/** The identity half of a revocation: `done` or `user_not_found`; errors name the gateway half. */
async function revokeIdentitySessions(
  deps: AdminDeps,
  user: UserRow,
  details: { revokedGatewaySessions: number },
): Promise<string> {
  if (deps.identityService === undefined) {
    throw new GatewayError(
      'IDENTITY_SERVICE_NOT_CONFIGURED',
      'The identity service API is not configured (IDENTITY_SERVICE_URL, IDENTITY_SERVICE_KEY).',
      { details },
    );
  }
  try {
    return await deps.identityService.revokeUserSessions(user.environment_key, user.subject);
  } catch (error) {
    if (isGatewayError(error)) {
      throw new GatewayError(error.code, error.message, {
        details: { ...error.details, ...details },
        cause: error,
      });
    }
    throw error;
  }
}
