import type { Knex } from 'knex';

// Spec 3.7: a user's onboarding status per platform.

export type MembershipStatus = 'NOT_STARTED' | 'IN_PROGRESS' | 'COMPLETE';

export type Membership = { status: MembershipStatus; completedAt: Date | null };

const table = 'onboarding.memberships';

type MembershipRow = { status: MembershipStatus; completed_at: Date | null };

const membershipOf = (row: MembershipRow): Membership => ({
  status: row.status,
  completedAt: row.completed_at === null ? null : new Date(row.completed_at),
});

/**
 * Creates the membership with `status` in one statement; undefined when it already exists
 * (created meanwhile by another request: decide again under its lock).
 */
export async function insertMembership(
  knex: Knex,
  userId: string,
  platformKey: string,
  status: MembershipStatus,
): Promise<Membership | undefined> {
  const now = new Date();
  const result = await knex.raw<{ rows: MembershipRow[] }>(
    `insert into onboarding.memberships
       (user_id, platform_key, status, completed_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?)
     on conflict (user_id, platform_key) do nothing
     returning status, completed_at`,
    [userId, platformKey, status, status === 'COMPLETE' ? now : null, now, now],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : membershipOf(row);
}

/** Creates the membership as NOT_STARTED unless it exists; returns it locked for update. */
export async function lockMembership(
  trx: Knex.Transaction,
  userId: string,
  platformKey: string,
): Promise<Membership> {
  const lock = async () =>
    (await trx(table)
      .select('status', 'completed_at')
      .where({ user_id: userId, platform_key: platformKey })
      .forUpdate()
      .first()) as MembershipRow | undefined;
  // Most memberships exist: lock first, create only when missing.
  const existing = await lock();
  if (existing !== undefined) return membershipOf(existing);
  const now = new Date();
  await trx(table)
    .insert({
      user_id: userId,
      platform_key: platformKey,
      status: 'NOT_STARTED',
      completed_at: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict(['user_id', 'platform_key'])
    .ignore();
  const row = await lock();
  if (row === undefined) throw new Error('membership upsert left no row');
  return membershipOf(row);
}

export async function setMembershipStatus(
  trx: Knex.Transaction,
  userId: string,
  platformKey: string,
  status: MembershipStatus,
): Promise<Membership> {
  const now = new Date();
  const completedAt = status === 'COMPLETE' ? now : null;
  await trx(table)
    .where({ user_id: userId, platform_key: platformKey })
    .update({ status, completed_at: completedAt, updated_at: now });
  return { status, completedAt };
}

/** Spec 3.6, 3.7: a schema change of the platform moves COMPLETE memberships to IN_PROGRESS. */
export async function reopenCompleteMemberships(
  trx: Knex.Transaction,
  platformKey: string,
): Promise<void> {
  await trx(table)
    .where({ platform_key: platformKey, status: 'COMPLETE' })
    .update({ status: 'IN_PROGRESS', completed_at: null, updated_at: new Date() });
}
