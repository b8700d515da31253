import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import type { Knex } from 'knex';
import { isConnectionFailure } from './errors.js';

type Span = ReturnType<typeof startDependencySpan>;
type QueryEvent = { __knexQueryUid?: string; sql?: string; method?: string };

// 57014: canceled by statement_timeout.
const STATEMENT_TIMEOUT = '57014';

/** The statement's first keyword (`SELECT`, `INSERT`, ...): never its text or parameters. */
function operationOf(event: QueryEvent): string {
  const keyword = /^\s*([A-Za-z]+)/.exec(event.sql ?? '')?.[1];
  return (keyword ?? event.method ?? 'query').toUpperCase();
}

function isDatabaseFailure(error: unknown): boolean {
  if (isConnectionFailure(error)) return true;
  return (error as { code?: unknown } | null)?.code === STATEMENT_TIMEOUT;
}

/**
 * A `pg.query` CLIENT span per query run through `knex` (transactions included), child of
 * the span active where the query was awaited. Attributes: the database system and the
 * statement's first keyword only; no SQL text, no parameters. Connection failures and
 * statement timeouts also count in `gateway.dependency.errors` (dependency `postgres`).
 */
export function traceQueries(knex: Knex): void {
  const open = new Map<string, Span>();
  knex.on('query', (event: QueryEvent) => {
    const id = event.__knexQueryUid;
    if (id === undefined) return;
    open.set(
      id,
      startDependencySpan('pg.query', {
        'db.system.name': 'postgresql',
        'db.operation.name': operationOf(event),
      }),
    );
  });
  knex.on('query-response', (_response: unknown, event: QueryEvent) => {
    const id = event.__knexQueryUid;
    if (id === undefined) return;
    open.get(id)?.end();
    open.delete(id);
  });
  knex.on('query-error', (error: unknown, event: QueryEvent) => {
    const id = event.__knexQueryUid;
    const span = id === undefined ? undefined : open.get(id);
    if (id !== undefined) open.delete(id);
    if (span !== undefined) {
      failDependencySpan(span, error, isDatabaseFailure(error) ? 'postgres' : undefined);
    } else if (isDatabaseFailure(error)) {
      failDependencySpan(startDependencySpan('pg.query', {}), error, 'postgres');
    }
  });
}
