import knexModule from 'knex';
import type pg from 'pg';
import type { CreateDatabaseOptions, Database } from './database.js';
import { DEFAULT_PING_TIMEOUT_MS, once } from './database.js';
import { createDirectStatements, registerDirectStatements } from './direct-statements.js';
import { quietKnexLog } from './knex-log.js';
import { createListenerSet, DEFAULT_HEARTBEAT_MS, openPostgresListener } from './listener.js';
import { postgresAdvisoryLock, registerCrossProcessLock } from './migration-lock.js';
import { pingDatabase } from './ping.js';
import { PG_SESSION_OPTIONS, pgTypes } from './type-parsers.js';

const DEFAULT_POOL_MAX = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

type PostgresOptions = CreateDatabaseOptions & { url: string };

/** A Database on a real PostgreSQL server, through knex's `pg` client. Connects lazily. */
export function createPostgresDatabase(options: PostgresOptions): Database {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const settings = {
    connectionString: options.url,
    connectionTimeoutMillis: connectTimeoutMs,
    options: PG_SESSION_OPTIONS,
    ...(options.statementTimeoutMs === undefined
      ? {}
      : { statement_timeout: options.statementTimeoutMs }),
  } satisfies pg.ClientConfig;
  const knex = knexModule.knex({
    client: 'pg',
    // Our type parsers (type-parsers.ts) apply to these connections only, not pg's globals.
    connection: { ...settings, types: pgTypes },
    pool: { min: 0, max: options.poolMax ?? DEFAULT_POOL_MAX },
    acquireConnectionTimeout: connectTimeoutMs,
    log: quietKnexLog,
  });
  // The sign-in path's statements (direct-statements.ts): a small pool of their own.
  const direct = createDirectStatements({ ...settings, types: pgTypes }, knex);
  registerDirectStatements(knex, direct);
  const listeners = createListenerSet();
  const database: Database = {
    knex,
    kind: 'postgres',
    ping: (timeoutMs = DEFAULT_PING_TIMEOUT_MS) => pingDatabase(knex, timeoutMs),
    listen: (channel, onNotification, listenOptions = {}) =>
      listeners.add(() =>
        openPostgresListener({ ...settings, types: pgTypes }, channel, onNotification, {
          heartbeatMs: listenOptions.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
          // Past the server's own statement_timeout, so that one answers first when it can.
          queryTimeoutMs: (options.statementTimeoutMs ?? connectTimeoutMs) + 1_000,
        }),
      ),
    get closed() {
      return listeners.closed;
    },
    close: once(async () => {
      await listeners.closeAll();
      await Promise.all([knex.destroy(), direct.close()]);
    }),
  };
  // The lock connection runs only its own lock queries, so it needs no type parsers.
  registerCrossProcessLock(database, postgresAdvisoryLock(settings));
  return database;
}
