import { randomUUID } from 'node:crypto';
import { queryRows, type Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import { STATUS_UNCHANGED } from './user-status-watch.js';

type Knex = Database['knex'];

export type UserStatus = 'ACTIVE' | 'SOFT_DELETED' | 'SUSPENDED';

export type UserRow = {
  id: string;
  issuer: string;
  subject: string;
  environment_key: string;
  email: string;
  email_verified: boolean;
  status: UserStatus;
  picture: string | null;
  name: string | null;
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type IdentityClaims = {
  issuer: string;
  subject: string;
  environmentKey: string;
  email: string | undefined;
  emailVerified: boolean;
  picture: string | undefined;
  name: string | undefined;
};

export const PLATFORM_ADMIN = 'platform_admin';
/** Spec 2.6: the permissions of platform_admin. */
export const PLATFORM_ADMIN_PERMISSIONS = [
  'platforms:admin',
  'onboarding:schema:read',
  'onboarding:schema:write',
] as const;

const users = 'authflow.users';
const roles = 'authflow.user_roles';

/** Spec 2.5: only HTTPS pictures are kept. */
function httpsPicture(picture: string | undefined): string | null {
  if (picture === undefined) return null;
  try {
    return new URL(picture).protocol === 'https:' ? picture : null;
  } catch {
    return null;
  }
}

/** A provisioned user, and whether it holds platform_admin (read in the same statement). */
export type ProvisionedUser = { user: UserRow; platformAdmin: boolean };

// Spec 2.5 JIT provisioning in one statement: the upsert by (issuer, subject) updates only an
// ACTIVE row (spec 3.8: a blocked user is refused before anything changes), and answers the
// role with it. When the upsert changed nothing, the second branch returns the blocked row as
// the statement's snapshot saw it (the upsert's CTE and this read share that snapshot). Two
// first logins of one identity at once: the unique (issuer, subject) decides, and the second
// updates the row the first inserted. It never changes a status (`status` is not in the SET
// list, a new row is ACTIVE with a fresh random id), so the user-status watch skips its fence.
const PROVISION_USER = `
  with upserted as (
    insert into authflow.users as u
      (id, issuer, subject, status, created_at, environment_key, email, email_verified,
       picture, name, last_login_at, updated_at)
    values (?, ?, ?, 'ACTIVE', ?, ?, ?, ?, ?, ?, ?, ?)
    on conflict (issuer, subject) do update set
      environment_key = excluded.environment_key,
      email = excluded.email,
      email_verified = excluded.email_verified,
      picture = excluded.picture,
      name = excluded.name,
      last_login_at = excluded.last_login_at,
      updated_at = excluded.updated_at
    where u.status = 'ACTIVE'
    returning u.*
  )
  select up.*, true as provisioned,
         exists (select 1 from authflow.user_roles r
                  where r.user_id = up.id and r.role = ?) as platform_admin
    from upserted up
  union all
  select u.*, false as provisioned, false as platform_admin
    from authflow.users u
   where u.issuer = ? and u.subject = ? and not exists (select 1 from upserted)
  ${STATUS_UNCHANGED}`;

type ProvisionRow = UserRow & { provisioned: boolean; platform_admin: boolean };

/**
 * Spec 2.5 JIT provisioning: the local user is found or created by (issuer, sub); e-mail,
 * email_verified and last login are updated at each login. A soft-deleted or suspended
 * user is refused (spec 3.8) before anything changes. One statement, which also answers
 * whether the user holds platform_admin (spec 2.6).
 */
export async function provisionUser(
  knex: Knex,
  claims: IdentityClaims,
  now: Date,
): Promise<ProvisionedUser> {
  // Straight through node-postgres (direct-statements.ts in @gateway/db).
  const [row] = await queryRows<ProvisionRow>(knex, PROVISION_USER, [
    randomUUID(),
    claims.issuer,
    claims.subject,
    now,
    claims.environmentKey,
    claims.email ?? '',
    claims.emailVerified,
    httpsPicture(claims.picture),
    claims.name ?? null,
    now,
    now,
    PLATFORM_ADMIN,
    claims.issuer,
    claims.subject,
  ]);
  if (row !== undefined) {
    const { provisioned, platform_admin: platformAdmin, ...user } = row;
    if (provisioned) return { user, platformAdmin };
    // The upsert changed nothing: the row is blocked, as the statement's snapshot saw it.
    refuseBlocked(user);
  }
  // The snapshot saw it ACTIVE (its status changed meanwhile) or not at all (committed
  // after the snapshot): the committed row tells which refusal applies.
  const current = (await knex(users)
    .where({ issuer: claims.issuer, subject: claims.subject })
    .first()) as UserRow | undefined;
  if (current !== undefined) refuseBlocked(current);
  throw new Error('user upsert changed nothing for an active user');
}

export function refuseBlocked(user: UserRow): void {
  if (user.status === 'SOFT_DELETED')
    throw new GatewayError('ACCOUNT_DELETED', 'This account was deleted.');
  if (user.status === 'SUSPENDED')
    throw new GatewayError('ACCOUNT_INACTIVE', 'This account is not active.');
}

export async function findUser(knex: Knex, userId: string): Promise<UserRow | undefined> {
  return (await knex(users).where({ id: userId }).first()) as UserRow | undefined;
}

/** Spec 2.5: the local user of an identity, keyed by (issuer, sub); undefined when none. */
export async function findUserBySubject(
  knex: Knex,
  issuer: string,
  subject: string,
): Promise<UserRow | undefined> {
  return (await knex(users).where({ issuer, subject }).first()) as UserRow | undefined;
}

/** Fixed text: no query building per call on the introspection path. */
const USER_STATUS = 'select status from authflow.users where id = ?';

/**
 * The user's status, by primary key, and nothing else: read live on every introspection
 * (spec 4.5: a suspended or deleted user's sessions are inactive at once). undefined when
 * there is no such user.
 */
export async function userStatus(knex: Knex, userId: string): Promise<UserStatus | undefined> {
  const result = await knex.raw<{ rows: Array<{ status: UserStatus }> }>(USER_STATUS, [userId]);
  return result.rows[0]?.status;
}

export async function hasRole(knex: Knex, userId: string, role: string): Promise<boolean> {
  return (await knex(roles).where({ user_id: userId, role }).first()) !== undefined;
}

/** Grants a role once; answers whether this call granted it. */
export async function grantRole(
  knex: Knex,
  userId: string,
  role: string,
  grantedBy: string,
  now: Date,
): Promise<boolean> {
  const inserted = (await knex(roles)
    .insert({ user_id: userId, role, granted_by: grantedBy, granted_at: now })
    .onConflict(['user_id', 'role'])
    .ignore()
    .returning('user_id')) as unknown[];
  return inserted.length > 0;
}

/**
 * Spec 2.6: permissions exist only for users of the deployment environment, and only
 * through the platform_admin role.
 */
export function permissionsOf(platformAdmin: boolean, deployment: boolean): string[] {
  return deployment && platformAdmin ? [...PLATFORM_ADMIN_PERMISSIONS] : [];
}
