import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { Database } from './database.js';
import { asDatabaseError } from './errors.js';
import { withMigrationLock } from './migration-lock.js';

/**
 * One step of a schema's history. Each statement needs its own `knex.raw` / schema builder
 * call: PGlite runs one statement per query. `up` and `down` receive the transaction they run
 * in, and must use it rather than `db.knex`.
 */
export type Migration = {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
};

/** A service's schema and its migrations, keyed by name and applied in key order. */
export type SchemaMigrations = {
  schema: string;
  /** e.g. `20261122_0001_create_audit_records` */
  migrations: Record<string, Migration>;
};

export type MigrationLockOptions = {
  /** How long to wait while another process migrates the same schema (default 30000). */
  lockTimeoutMs?: number;
};

export type RollbackOptions = MigrationLockOptions & {
  /** Roll back every applied migration instead of only the last batch. */
  all?: boolean;
};

export type MigrationStatus = { applied: string[]; pending: string[] };

const MIGRATIONS_TABLE = 'knex_migrations';
const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * Creates the schema if missing and applies its pending migrations (all in one transaction),
 * recording them in `<schema>.knex_migrations`. Returns the names applied, in order. When
 * another process is migrating the same schema, waits for it (up to lockTimeoutMs).
 */
export async function migrateSchema(
  db: Database,
  set: SchemaMigrations,
  options: MigrationLockOptions = {},
): Promise<string[]> {
  const schema = checkedSchema(set);
  return runLocked(db, schema, options, 'migrating', async () => {
    await db.knex.raw('create schema if not exists ??', [schema]);
    return appliedNames(await db.knex.migrate.latest(migratorConfig(set)));
  });
}

/** Runs `down` of the last batch (or of everything with `all`). Returns the names, in order run. */
export async function rollbackSchema(
  db: Database,
  set: SchemaMigrations,
  options: RollbackOptions = {},
): Promise<string[]> {
  const schema = checkedSchema(set);
  return runLocked(db, schema, options, 'rolling back migrations', async () => {
    if (!(await migrationsTableExists(db.knex, schema))) return [];
    return appliedNames(await db.knex.migrate.rollback(migratorConfig(set), options.all === true));
  });
}

/** Which migrations of the set are recorded as applied and which are not. Changes nothing. */
export async function migrationStatus(
  db: Database,
  set: SchemaMigrations,
): Promise<MigrationStatus> {
  const schema = checkedSchema(set);
  try {
    const applied = (await migrationsTableExists(db.knex, schema))
      ? await db.knex
          .withSchema(schema)
          .from(MIGRATIONS_TABLE)
          .orderBy('id')
          .pluck<string[]>('name')
      : [];
    const done = new Set(applied);
    const pending = migrationNames(set).filter((name) => !done.has(name));
    return { applied, pending };
  } catch (error) {
    throw asDatabaseError(error, 'reading migration status');
  }
}

function migrationNames(set: SchemaMigrations): string[] {
  // Plain code-unit order: the same everywhere, whatever the locale.
  return Object.keys(set.migrations).sort();
}

function migratorConfig(set: SchemaMigrations): Knex.MigratorConfig {
  const source: Knex.MigrationSource<string> = {
    getMigrations: async () => migrationNames(set),
    getMigrationName: (name) => name,
    getMigration: async (name) => {
      const migration = set.migrations[name];
      if (!migration) throw new Error(`Unknown migration ${name} for schema ${set.schema}`);
      return migration;
    },
  };
  return { schemaName: set.schema, tableName: MIGRATIONS_TABLE, migrationSource: source };
}

async function migrationsTableExists(knex: Knex, schema: string): Promise<boolean> {
  const row: unknown = await knex('pg_catalog.pg_tables')
    .where({ schemaname: schema, tablename: MIGRATIONS_TABLE })
    .first(knex.raw('1 as found'));
  return row !== undefined;
}

/** knex resolves latest/rollback with `[batchNo, names]`. */
function appliedNames(result: unknown): string[] {
  if (Array.isArray(result) && Array.isArray(result[1])) {
    return result[1].filter((name): name is string => typeof name === 'string');
  }
  return [];
}

function checkedSchema(set: SchemaMigrations): string {
  if (!SCHEMA_NAME.test(set.schema)) {
    throw new Error(`Invalid schema name "${set.schema}": use lowercase letters, digits and _`);
  }
  return set.schema;
}

const RETRY_PAUSE_MS = 250;

/**
 * Runs migration work under our lock (see migration-lock.ts). If knex still finds its own
 * lock row taken (another process running older code, or a run that died without its
 * transaction), retries until the timeout instead of failing at once.
 */
async function runLocked<T>(
  db: Database,
  schema: string,
  options: MigrationLockOptions,
  doing: string,
  work: () => Promise<T>,
): Promise<T> {
  const timeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  try {
    return await withMigrationLock(db, schema, timeoutMs, async () => {
      for (;;) {
        try {
          return await work();
        } catch (error) {
          if (!isKnexLockError(error)) throw error;
          if (Date.now() >= deadline) {
            throw new Error(
              `Migrations of schema "${schema}" stayed locked (${schema}.${MIGRATIONS_TABLE}_lock) for more than ${timeoutMs} ms. ` +
                'If no other process is migrating, a previous run left the lock behind: set is_locked = 0 in that table.',
              { cause: error },
            );
          }
          await sleep(RETRY_PAUSE_MS + Math.floor(Math.random() * RETRY_PAUSE_MS));
        }
      }
    });
  } catch (error) {
    throw asDatabaseError(error, doing);
  }
}

function isKnexLockError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'MigrationLocked'
  );
}
