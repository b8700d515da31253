// Runs once after the test files: drops the template databases this run prepared
// (`gw_tpl_<run id>_*`, see scripts/jest-global-setup.js). Test files drop their own databases.
import pg from 'pg';

const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export default async function globalTeardown() {
  const runId = process.env.GATEWAY_TEST_RUN_ID;
  if (runId === undefined) return;
  const client = new pg.Client({
    connectionString: process.env.DATABASE_URL || LOCAL_POSTGRES_URL,
    connectionTimeoutMillis: 10_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch {
    return; // no server: no test could have made a template either
  }
  try {
    const { rows } = await client.query(
      "select datname from pg_database where datname like 'gw\\_tpl\\_' || $1 || '\\_%'",
      [runId],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await client.end().catch(() => {});
  }
}
