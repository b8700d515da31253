import type { Knex } from 'knex';

// Spec 9: requirementVersion, one integer per platform (and one for the global fields),
// moved up in the same transaction as the definition change that caused it (spec 3.6).

const table = 'onboarding.schema_versions';

export const GLOBAL_SCHEMA = 'global';
export const platformSchema = (platformKey: string): string => `platform:${platformKey}`;

/** Increments a schema's version (0 before the first change) and returns the new value. */
export async function bumpSchemaVersion(trx: Knex.Transaction, scope: string): Promise<number> {
  const result = await trx.raw<{ rows: { version: number }[] }>(
    `insert into onboarding.schema_versions (scope, version) values (?, 1)
     on conflict (scope) do update set version = onboarding.schema_versions.version + 1
     returning version`,
    [scope],
  );
  const version = result.rows[0]?.version;
  if (version === undefined) throw new Error('schema version upsert returned no row');
  return version;
}

/** The current versions of `scopes` (0 for a schema never changed). */
export async function schemaVersions(
  knex: Knex,
  scopes: readonly string[],
): Promise<Map<string, number>> {
  const versions = new Map(scopes.map((scope) => [scope, 0]));
  if (scopes.length === 0) return versions;
  const rows = (await knex(table).whereIn('scope', scopes)) as { scope: string; version: number }[];
  for (const row of rows) versions.set(row.scope, row.version);
  return versions;
}

/**
 * Reads the versions of `scopes` and holds a share lock on them until `trx` ends, so a
 * definition change (which updates the row) waits for a values save that checked the old
 * version. Two statements whatever the number of scopes.
 */
export async function lockSchemaVersions(
  trx: Knex.Transaction,
  scopes: readonly string[],
): Promise<Map<string, number>> {
  await trx.raw(
    `insert into onboarding.schema_versions (scope, version)
     values ${scopes.map(() => '(?, 0)').join(', ')} on conflict do nothing`,
    [...scopes],
  );
  const rows = (await trx(table).whereIn('scope', scopes).forShare()) as {
    scope: string;
    version: number;
  }[];
  const versions = new Map(scopes.map((scope) => [scope, 0]));
  for (const row of rows) versions.set(row.scope, row.version);
  return versions;
}
