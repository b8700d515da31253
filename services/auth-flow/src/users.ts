import { randomUUID } from 'node:crypto';
import type { Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';

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

/**
 * Spec 2.5 JIT provisioning: the local user is found or created by (issuer, sub); e-mail,
 * email_verified and last login are updated at each login. A soft-deleted or suspended
 * user is refused (spec 3.8) before anything changes.
 */
export async function provisionUser(
  knex: Knex,
  claims: IdentityClaims,
  now: Date,
): Promise<UserRow> {
  const fields = {
    environment_key: claims.environmentKey,
    email: claims.email ?? '',
    email_verified: claims.emailVerified,
    picture: httpsPicture(claims.picture),
    name: claims.name ?? null,
    last_login_at: now,
    updated_at: now,
  };
  const existing = (await knex(users)
    .where({ issuer: claims.issuer, subject: claims.subject })
    .first()) as UserRow | undefined;
  if (existing !== undefined) {
    refuseBlocked(existing);
    const [updated] = (await knex(users)
      .where({ id: existing.id })
      .update(fields)
      .returning('*')) as UserRow[];
    return updated ?? existing;
  }
  // Two first logins of one identity at once: the unique (issuer, subject) decides.
  const [created] = (await knex(users)
    .insert({
      id: randomUUID(),
      issuer: claims.issuer,
      subject: claims.subject,
      status: 'ACTIVE',
      created_at: now,
      ...fields,
    })
    .onConflict(['issuer', 'subject'])
    .merge(fields)
    .returning('*')) as UserRow[];
  if (created === undefined) throw new Error('user insert returned nothing');
  refuseBlocked(created);
  return created;
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
export async function permissionsOf(
  knex: Knex,
  user: UserRow,
  deployment: boolean,
): Promise<string[]> {
  if (!deployment) return [];
  return (await hasRole(knex, user.id, PLATFORM_ADMIN)) ? [...PLATFORM_ADMIN_PERMISSIONS] : [];
}
