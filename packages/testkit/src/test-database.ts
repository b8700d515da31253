import { postgresAdminUrl, withPostgresClient } from './postgres-admin.js';
import { randomHex } from './random-name.js';
import { waitFor } from './wait-for.js';

export type TestDatabase = {
  /** Connection URL of the new database. */
  url: string;
  /** Its name: `gw_t_<random hex>`. */
  name: string;
  /** Ends remaining connections to the database and drops it. Safe to call twice. */
  drop(): Promise<void>;
};

/**
 * What every database made from it starts with, for example all migrations applied. Preparing
 * takes seconds; copying a prepared database takes a fraction of that, so within one test run
 * it is prepared once, in a template database, and each test database is a copy of it.
 */
export type TestDatabaseTemplate = {
  /** Names the template within a run: lowercase letters, digits and `_`. */
  key: string;
  /** Brings a new, empty database at `url` to the template's state; closes its connections. */
  prepare(url: string): Promise<void>;
};

/**
 * The variable the test run's global setup sets (scripts/jest-global-setup.js); its global
 * teardown drops the templates named after it. Without it, templates are not shared and each
 * database is prepared on its own.
 */
export const TEST_RUN_ID_VARIABLE = 'GATEWAY_TEST_RUN_ID';

/** Prefix of template databases; the run's global teardown drops `<prefix><run id>_*`. */
export const TEMPLATE_DATABASE_PREFIX = 'gw_tpl_';

/** Creates a PostgreSQL database for one test file: empty, or a copy of `template`. */
export async function createTestDatabase(
  options: { template?: TestDatabaseTemplate } = {},
): Promise<TestDatabase> {
  const adminUrl = await postgresAdminUrl();
  const name = `gw_t_${randomHex()}`;
  const { template } = options;
  const runId = process.env[TEST_RUN_ID_VARIABLE];
  if (template !== undefined && runId !== undefined && /^[0-9a-z]+$/.test(runId)) {
    const templateName = `${TEMPLATE_DATABASE_PREFIX}${runId}_${template.key}`;
    await preparedTemplate(adminUrl, templateName, template);
    await copyDatabase(adminUrl, templateName, name);
  } else {
    await withPostgresClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
    await template?.prepare(urlForDatabase(adminUrl, name));
  }
  return {
    url: urlForDatabase(adminUrl, name),
    name,
    drop: () => dropDatabase(adminUrl, name),
  };
}

/** The template database, prepared by whichever test file of the run asks first. */
async function preparedTemplate(
  adminUrl: string,
  templateName: string,
  template: TestDatabaseTemplate,
): Promise<void> {
  if (!/^[a-z0-9_]{1,63}$/.test(templateName)) throw new TypeError(`Bad template ${templateName}`);
  await withPostgresClient(adminUrl, async (client) => {
    // Test files run in parallel workers: one prepares, the others wait for it here.
    await client.query('select pg_advisory_lock(hashtext($1))', [templateName]);
    try {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [
        templateName,
      ]);
      if (rowCount === 1) return;
      const preparing = `${templateName}_preparing`;
      await dropDatabase(adminUrl, preparing);
      await client.query(`CREATE DATABASE "${preparing}"`);
      await template.prepare(urlForDatabase(adminUrl, preparing));
      await waitForNoConnections(adminUrl, preparing);
      // Renamed only once complete, so a failed preparation is never copied. Closed to
      // connections (autovacuum's too), since a database being copied must have none.
      await client.query(`ALTER DATABASE "${preparing}" RENAME TO "${templateName}"`);
      await client.query(`ALTER DATABASE "${templateName}" WITH ALLOW_CONNECTIONS false`);
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [templateName]);
    }
  });
}

async function copyDatabase(adminUrl: string, templateName: string, name: string): Promise<void> {
  await withPostgresClient(adminUrl, (client) =>
    client.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`),
  );
}

/** A closed client's backend ends a moment after the client; copying needs it gone. */
async function waitForNoConnections(adminUrl: string, name: string): Promise<void> {
  await waitFor(
    () =>
      withPostgresClient(adminUrl, async (client) => {
        const { rows } = await client.query<{ count: string }>(
          'select count(*) as count from pg_stat_activity where datname = $1',
          [name],
        );
        return rows[0]?.count === '0';
      }),
    { timeoutMs: 30_000, intervalMs: 50, what: `the connections to ${name} to end` },
  );
}

function urlForDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Ends remaining connections to the database `name` and drops it, if it exists. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
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
