import type { Knex } from 'knex';

export type DatabaseKind = 'postgres' | 'pglite';

/**
 * One per process, shared by every service in it. Services write schema-qualified table names
 * (`knex('registry.platforms')`) and never rely on search_path.
 */
export type Database = {
  knex: Knex;
  kind: DatabaseKind;
  /** `select 1`; rejects with DatabaseUnavailableError on failure or after timeoutMs (2000). */
  ping(timeoutMs?: number): Promise<void>;
  /**
   * LISTEN on `channel` (a plain lower-case name); `onNotification` gets each payload, in
   * commit order. PostgreSQL: on a connection of its own, checked every `heartbeatMs`
   * (default 1000); PGlite: on its one connection, delivering before the committing query
   * resolves. Rejects when the database cannot be reached or is closed.
   */
  listen(
    channel: string,
    onNotification: (payload: string) => void,
    options?: { heartbeatMs?: number },
  ): Promise<DatabaseListener>;
  /** True once close() was called. */
  readonly closed: boolean;
  /** Closes every connection, listeners included (and the embedded database). Safe to call twice. */
  close(): Promise<void>;
};

/** A LISTEN opened by Database.listen. */
export type DatabaseListener = {
  /**
   * Runs one statement (no parameters) and answers its rows: on PostgreSQL on the listening
   * connection itself (its failure or time-out ends the listener), on PGlite through knex.
   */
  query<Row = Record<string, unknown>>(sql: string): Promise<Row[]>;
  /**
   * Settles (never rejects) once no more notifications can come: with what ended the
   * connection, or undefined after close(). Changes made from then on are not announced.
   */
  readonly ended: Promise<unknown>;
  /** False from the moment `ended` settles (synchronously, unlike awaiting `ended`). */
  readonly listening: boolean;
  close(): Promise<void>;
};

export type CreateDatabaseOptions = {
  /** PostgreSQL URL: use a real server through node-postgres. Wins over dataDir/inMemory. */
  url?: string;
  /** Embedded PostgreSQL (PGlite) keeping its files in this folder (created if missing). */
  dataDir?: string;
  /** Embedded PostgreSQL in memory, gone on close (tests). */
  inMemory?: boolean;
  /** PostgreSQL only: most pool connections (default 10; the pool keeps none idle). */
  poolMax?: number;
  /** PostgreSQL only: `statement_timeout` set on every connection. */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: connect timeout and the longest wait for a pool connection (default 5000).
   * PGlite: the longest a query waits for the single connection while a transaction holds it
   * (default 30000).
   */
  connectTimeoutMs?: number;
};

export const DEFAULT_PING_TIMEOUT_MS = 2_000;

/** Makes `close` run once, however often it is called. */
export function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
