import type { Knex } from 'knex';
import { canonicalProfileKeys, type CanonicalProfileKey } from '@gateway/field-rules';

// Spec 2.5: the canonical profile of a local user: the 13 canonical keys (one string each;
// dateOfBirth `YYYY-MM-DD`), avatarUrl and metadata. Shared by every platform.

export type ProfileValues = Record<CanonicalProfileKey, string | null>;

export type StoredProfile = {
  userId: string;
  values: ProfileValues;
  avatarUrl: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date | null;
  updatedAt: Date | null;
};

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The column of each canonical key (`dateOfBirth` -> `date_of_birth`). */
export const PROFILE_COLUMNS: Readonly<Record<CanonicalProfileKey, string>> = Object.fromEntries(
  canonicalProfileKeys.map((key) => [key, snake(key)]),
) as Record<CanonicalProfileKey, string>;

const table = 'onboarding.profiles';

function emptyValues(): ProfileValues {
  return Object.fromEntries(canonicalProfileKeys.map((key) => [key, null])) as ProfileValues;
}

/** A profile row as read with selectColumns or PROFILE_SELECT_SQL. */
export type ProfileRow = Record<string, unknown> & {
  user_id: string;
  avatar_url: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};

/** Column list that reads dateOfBirth as text, so no time zone can shift it. */
function selectColumns(knex: Knex): (string | Knex.Raw)[] {
  return [
    'user_id',
    'avatar_url',
    'metadata',
    'created_at',
    'updated_at',
    ...canonicalProfileKeys.map((key) =>
      key === 'dateOfBirth'
        ? knex.raw(`to_char(date_of_birth, 'YYYY-MM-DD') as date_of_birth`)
        : PROFILE_COLUMNS[key],
    ),
  ];
}

/**
 * The same columns as SQL text for a larger statement, on the profiles table aliased `p`.
 * Every column keeps its name, so the statement must not select others of those names.
 */
export const PROFILE_SELECT_SQL: string = [
  'p.user_id',
  'p.avatar_url',
  'p.metadata',
  'p.created_at',
  'p.updated_at',
  ...canonicalProfileKeys.map((key) =>
    key === 'dateOfBirth'
      ? `to_char(p.date_of_birth, 'YYYY-MM-DD') as date_of_birth`
      : `p.${PROFILE_COLUMNS[key]}`,
  ),
].join(', ');

/** The profile a row holds; every value null (and no timestamps) without a row. */
export function profileOf(userId: string, row: ProfileRow | undefined): StoredProfile {
  if (row === undefined) {
    return {
      userId,
      values: emptyValues(),
      avatarUrl: null,
      metadata: {},
      createdAt: null,
      updatedAt: null,
    };
  }
  const values = emptyValues();
  for (const key of canonicalProfileKeys) {
    const value = row[PROFILE_COLUMNS[key]];
    values[key] = typeof value === 'string' ? value : null;
  }
  return {
    userId,
    values,
    avatarUrl: row.avatar_url,
    metadata: row.metadata,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The user's profile; every value null (and no timestamps) before the profile exists. */
export async function readProfile(knex: Knex, userId: string): Promise<StoredProfile> {
  const row = (await knex(table).select(selectColumns(knex)).where({ user_id: userId }).first()) as
    ProfileRow | undefined;
  return profileOf(userId, row);
}

/**
 * Writes canonical values (already validated; null clears) and, when given, avatarUrl and
 * metadata, creating the profile on first use. One statement: run it inside the caller's
 * transaction when it is part of a larger write.
 */
export async function writeProfile(
  knex: Knex,
  userId: string,
  change: {
    values?: Partial<ProfileValues>;
    avatarUrl?: string | null;
    metadata?: Record<string, unknown>;
  },
): Promise<void> {
  const columns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(change.values ?? {})) {
    columns[PROFILE_COLUMNS[key as CanonicalProfileKey]] = value;
  }
  if (change.avatarUrl !== undefined) columns.avatar_url = change.avatarUrl;
  if (change.metadata !== undefined) columns.metadata = JSON.stringify(change.metadata);
  const now = new Date();
  await knex(table)
    .insert({ user_id: userId, ...columns, created_at: now, updated_at: now })
    .onConflict('user_id')
    .merge([...Object.keys(columns), 'updated_at']);
}
