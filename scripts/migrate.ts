// `pnpm migrate [up|down|status]`: applies (default), rolls back the last batch of, or
// lists the migrations of every service schema (registry, onboarding, authflow) on
// DATABASE_URL, or on the embedded PGlite database in GATEWAY_DATA_DIR when it is unset.
// Services also migrate their own schema at start; this command is for operators (the
// Kubernetes migration Job) and for inspecting a database.
import { allSchemaMigrations } from '@gateway/all-in-one';
import { loadConfigOrExit } from '@gateway/config';
import { createDatabase, migrateSchema, migrationStatus, rollbackSchema } from '@gateway/db';

const action = process.argv[2] ?? 'up';
if (!['up', 'down', 'status'].includes(action)) {
  process.stderr.write('Usage: pnpm migrate [up|down|status]\n');
  process.exit(2);
}
// Migrating needs no identity provider; a placeholder issuer satisfies the shared schema.
const config = loadConfigOrExit({ IDENTITY_ISSUER: 'http://localhost', ...process.env });
const db = await createDatabase(
  config.databaseUrl === undefined ? { dataDir: config.dataDir } : { url: config.databaseUrl },
);
try {
  for (const set of allSchemaMigrations) {
    if (action === 'up') {
      const applied = await migrateSchema(db, set);
      process.stdout.write(`${set.schema}: applied ${applied.length} migration(s)\n`);
    } else if (action === 'down') {
      const reverted = await rollbackSchema(db, set);
      process.stdout.write(`${set.schema}: rolled back ${reverted.length} migration(s)\n`);
    } else {
      const status = await migrationStatus(db, set);
      process.stdout.write(
        `${set.schema}: ${status.applied.length} applied, ${status.pending.length} pending` +
          `${status.pending.length > 0 ? ` (${status.pending.join(', ')})` : ''}\n`,
      );
    }
  }
} finally {
  await db.close();
}
