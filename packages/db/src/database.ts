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
  /** Closes every connection (and the embedded database). Safe to call twice. */
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
