import type { Knex } from 'knex';
import pg from 'pg';

/**
 * The statements every sign-in runs (provisioning the user, the onboarding state)
 * go straight to node-postgres when they can. Through knex each one pays for its runner,
 * the tarn pool's acquire (a timer and a pending operation per call) and the rewriting of
 * its `?` placeholders into `$n` on every call, which for these two statements is a large
 * share of what a sign-in allocates and of the gateway's CPU per sign-in.
 *
 * A database's own knex (never a transaction) on PostgreSQL registers a runner here; every
 * other knex (a transaction, PGlite's single connection) runs the statement through
 * `knex.raw` as before, so a statement inside a transaction stays inside it.
 */
export type DirectStatements = {
  query<Row>(sql: string, values: readonly unknown[]): Promise<Row[]>;
  close(): Promise<void>;
};

const runners = new WeakMap<Knex, DirectStatements>();

export function registerDirectStatements(knex: Knex, runner: DirectStatements): void {
  runners.set(knex, runner);
}

/**
 * Runs one statement written with `?` placeholders (as for `knex.raw`, `??` not supported)
 * and answers its rows: on a Postgres database's own knex through its direct pool, else
 * through `knex.raw` on `knex` (a transaction included).
 */
export async function queryRows<Row>(
  knex: Knex,
  sql: string,
  values: readonly unknown[],
): Promise<Row[]> {
  const runner = runners.get(knex);
  if (runner !== undefined) return runner.query<Row>(sql, values);
  const result = await knex.raw<{ rows: Row[] }>(sql, values as Knex.RawBinding[]);
  return result.rows;
}

/** The most connections of a direct pool: the sign-in statements are short (one round trip). */
export const DIRECT_POOL_MAX = 4;

type QueryEvent = { __knexQueryUid: string; method: 'raw'; sql: string; bindings: unknown[] };

/**
 * A pool of its own for `knex`'s direct statements (at most DIRECT_POOL_MAX connections, none
 * kept idle beyond 10 s), with the knex pool's connection settings: type parsers, session
 * options, statement timeout, connect timeout (also the longest wait for a connection).
 * Each statement emits knex's own `query`, `query-response` and `query-error` events on
 * `knex`, so what watches knex's statements sees these too: the `pg.query` spans and
 * dependency errors of traceQueries, the user-status watch, tests that count statements.
 */
export function createDirectStatements(settings: pg.PoolConfig, knex: Knex): DirectStatements {
  const pool = new pg.Pool({
    ...settings,
    max: DIRECT_POOL_MAX,
    idleTimeoutMillis: 10_000,
    // Its idle connections never keep a process alive (a script or test that forgot close()).
    allowExitOnIdle: true,
  });
  // An idle connection that fails (the server restarted) is dropped by the pool; without a
  // listener its 'error' event would end the process.
  pool.on('error', () => undefined);
  const positional = new Map<string, string>();
  let calls = 0;
  return {
    async query<Row>(sql: string, values: readonly unknown[]): Promise<Row[]> {
      let text = positional.get(sql);
      if (text === undefined) {
        text = toPositional(sql);
        positional.set(sql, text);
      }
      calls += 1;
      const bindings = values as unknown[];
      const event: QueryEvent = { __knexQueryUid: `direct:${calls}`, method: 'raw', sql, bindings };
      knex.emit('query', event);
      try {
        const result = await pool.query(text, bindings);
        knex.emit('query-response', result, event);
        return result.rows as Row[];
      } catch (error) {
        knex.emit('query-error', error, event);
        throw error;
      }
    },
    close: () => pool.end(),
  };
}

/** `?` → `$1`, `$2`... outside string literals and quoted names (`??` is not supported). */
export function toPositional(sql: string): string {
  let out = '';
  let index = 0;
  let quote: string | undefined;
  for (const char of sql) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      out += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      out += char;
    } else if (char === '?') {
      index += 1;
      out += `$${index}`;
    } else {
      out += char;
    }
  }
  return out;
}
