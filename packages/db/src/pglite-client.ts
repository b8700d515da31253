// knex-pglite is CommonJS and typed as knex's `Client`; this is the only module that touches
// it. We subclass it to fix how it reports affected rows.
import ClientPGLite from 'knex-pglite';

type QueryObject = { method?: string };
type ProcessResponse = (this: unknown, query: QueryObject, runner: unknown) => unknown;

const baseProcessResponse = (
  ClientPGLite.prototype as unknown as { processResponse: ProcessResponse }
).processResponse;

// knex-pglite names the result's `command` after knex's method, so `del()` ('DEL') and
// `increment()` ('COUNTER') fall through knex's PostgreSQL handling and return the raw result
// object instead of the number of affected rows, as they do with pg. Rename them to the SQL
// commands knex expects.
const METHOD_AS_COMMAND: Record<string, string> = { del: 'delete', counter: 'update' };

export class PGliteKnexClient extends ClientPGLite {
  processResponse(query: QueryObject, runner: unknown): unknown {
    const method = query.method === undefined ? undefined : METHOD_AS_COMMAND[query.method];
    return baseProcessResponse.call(this, method ? { ...query, method } : query, runner);
  }
}
