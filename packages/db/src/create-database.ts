import type { CreateDatabaseOptions, Database } from './database.js';
import { createPGliteDatabase } from './pglite-database.js';
import { createPostgresDatabase } from './postgres-database.js';
import { traceQueries } from './query-tracing.js';

/**
 * `url` → PostgreSQL through node-postgres; otherwise embedded PostgreSQL (PGlite) under
 * `dataDir`, or in memory when `inMemory`. Create one per process and share it. Every query
 * gets a `pg.query` span (query-tracing.ts).
 */
export async function createDatabase(options: CreateDatabaseOptions): Promise<Database> {
  const database = await openDatabase(options);
  traceQueries(database.knex);
  return database;
}

async function openDatabase(options: CreateDatabaseOptions): Promise<Database> {
  if (options.url) return createPostgresDatabase({ ...options, url: options.url });
  if (options.dataDir) {
    return createPGliteDatabase({
      dataDir: options.dataDir,
      connectTimeoutMs: options.connectTimeoutMs,
    });
  }
  if (options.inMemory) return createPGliteDatabase({ connectTimeoutMs: options.connectTimeoutMs });
  throw new Error(
    'createDatabase needs one of: url (PostgreSQL), dataDir (embedded PostgreSQL on disk) or inMemory: true',
  );
}
