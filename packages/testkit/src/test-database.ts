import { postgresAdminUrl, withPostgresClient } from './postgres-admin.js';
import { randomHex } from './random-name.js';

export type TestDatabase = {
  /** Connection URL of the new, empty database. */
  url: string;
  /** Its name: `gw_t_<random hex>`. */
  name: string;
  /** Ends remaining connections to the database and drops it. Safe to call twice. */
  drop(): Promise<void>;
};

/** Creates an empty PostgreSQL database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = await postgresAdminUrl();
  const name = `gw_t_${randomHex()}`;
  await withPostgresClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    url: urlForDatabase(adminUrl, name),
    name,
    drop: () => dropDatabase(adminUrl, name),
  };
}

function urlForDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withPostgresClient(adminUrl, async (client) => {
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    );
    const { rows } = await client.query<{ version: string }>(
      "select current_setting('server_version_num') as version",
    );
    // WITH (FORCE) (PostgreSQL 13+) also ends connections opened after the terminate above.
    const force = Number(rows[0]?.version) >= 130_000 ? ' WITH (FORCE)' : '';
    await client.query(`DROP DATABASE IF EXISTS "${name}"${force}`);
  });
}
