// Keeps two runs of migrations for the same schema from overlapping.
//
// knex's own lock (a row in <schema>.knex_migrations_lock) is taken only after knex has
// created its bookkeeping tables, and that creation is not safe when two processes do it at
// the same moment (both may create the tables or insert a lock row). So:
//  - within a process, migration work on one Database runs one at a time (this matters for
//    PGlite, where every caller shares the single connection);
//  - across processes on real PostgreSQL, a session-level advisory lock per schema is held on
//    a dedicated connection (outside the knex pool, so a pool of 1 cannot deadlock). The
//    server releases it by itself if the process dies.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DatabaseUnavailableError, errorMessage } from './errors.js';

export type CrossProcessLock = <T>(
  schema: string,
  timeoutMs: number,
  work: () => Promise<T>,
) => Promise<T>;

const crossProcessLocks = new WeakMap<object, CrossProcessLock>();
const queues = new WeakMap<object, Promise<unknown>>();

export function registerCrossProcessLock(database: object, lock: CrossProcessLock): void {
  crossProcessLocks.set(database, lock);
}

/** Runs `work` while holding the migration lock for `schema` of `database`. */
export function withMigrationLock<T>(
  database: object,
  schema: string,
  timeoutMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const previous = queues.get(database) ?? Promise.resolve();
  const run = previous.then(() => {
    const lock = crossProcessLocks.get(database);
    return lock ? lock(schema, timeoutMs, work) : work();
  });
  queues.set(
    database,
    run.catch(() => undefined),
  );
  return run;
}

const LOCK_POLL_MS = 200;

/** The two int4 keys of the advisory lock: hashtext() of these strings. */
function lockKey(schema: string): [string, string] {
  return ['gateway.migrations', schema];
}

/** An advisory lock on PostgreSQL, taken on its own connection made from `config`. */
export function postgresAdvisoryLock(config: pg.ClientConfig): CrossProcessLock {
  return async (schema, timeoutMs, work) => {
    const client = new pg.Client(config);
    client.on('error', () => {}); // a dropped lock connection surfaces through the queries
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw new DatabaseUnavailableError(
        `Database unavailable while migrating: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    try {
      const deadline = Date.now() + timeoutMs;
      while (!(await tryAdvisoryLock(client, schema))) {
        if (Date.now() >= deadline) {
          throw new Error(
            `Another process has been migrating schema "${schema}" for more than ${timeoutMs} ms; giving up`,
          );
        }
        await sleep(LOCK_POLL_MS);
      }
      try {
        return await work();
      } finally {
        await client
          .query('select pg_advisory_unlock(hashtext($1), hashtext($2))', lockKey(schema))
          .catch(() => {});
      }
    } finally {
      await client.end().catch(() => {});
    }
  };
}

async function tryAdvisoryLock(client: pg.Client, schema: string): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(
    'select pg_try_advisory_lock(hashtext($1), hashtext($2)) as locked',
    lockKey(schema),
  );
  return rows[0]?.locked === true;
}
