import type { Database } from '@gateway/db';

// A digest of every row the gateway's services keep in PostgreSQL (registry, onboarding,
// authflow), to show that a refused write changed nothing. Left out are what a refused
// request changes on purpose, before any validation: the audit record of refused platform
// credentials (a security event, spec 2.15), the time a platform key was last presented, and
// the time a user's claims were last synced from the token that authenticated the request.

const SCHEMAS = ['registry', 'onboarding', 'authflow'];

/** Per table: which rows and columns count. */
const ROW_FILTERS: Record<string, string> = {
  'registry.audit_records': "where t.kind <> 'platform.authentication_failed'",
};
const IGNORED_COLUMNS: Record<string, string[]> = {
  'registry.platform_credentials': ['last_used_at'],
  'authflow.users': ['updated_at', 'last_login_at'],
};

/** Table name to the digest of its rows. */
export type DatabaseDigest = () => Promise<Map<string, string>>;

/** The tables whose rows differ between two digests. */
export function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([name, rows]) => before.get(name) !== rows).map(([name]) => name);
}

/** Lists the service tables once, and answers a function that digests them in one query. */
export async function createDatabaseDigest(db: Database): Promise<DatabaseDigest> {
  const tables = await db.knex.raw<{ rows: { name: string }[] }>(
    `select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema = any(?) and table_type = 'BASE TABLE'
        and table_name not like 'knex_migrations%' order by 1`,
    [SCHEMAS],
  );
  const parts = tables.rows.map(({ name }) => {
    const ignored = (IGNORED_COLUMNS[name] ?? []).map((column) => ` - '${column}'`).join('');
    const row = `(to_jsonb(t)${ignored})::text`;
    return `select '${name}' as name,
      coalesce(md5(string_agg(${row}, ',' order by ${row})), '') as digest
      from ${name} t ${ROW_FILTERS[name] ?? ''}`;
  });
  const sql = parts.join(' union all ');
  return async () => {
    const result = await db.knex.raw<{ rows: { name: string; digest: string }[] }>(sql);
    return new Map(result.rows.map(({ name, digest }) => [name, digest]));
  };
}
