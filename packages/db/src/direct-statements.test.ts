import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from './database.js';
import { queryRows, toPositional } from './direct-statements.js';
import { isConnectionFailure } from './errors.js';
import { createDriverHarness } from './testing/database-drivers.js';

const harness = createDriverHarness();
afterAll(() => harness.cleanup());

describe('toPositional', () => {
  it('numbers the placeholders and leaves quoted question marks alone', () => {
    expect(toPositional(`select ? as a, '?' as "b?", ? || 'it''s?' as c where x = ?`)).toBe(
      `select $1 as a, '?' as "b?", $2 || 'it''s?' as c where x = $3`,
    );
  });
});

describe.each(harness.drivers)('queryRows on $kind', (driver) => {
  let db: Database;
  beforeAll(async () => {
    db = await driver.open();
    await db.knex.raw(
      'create table if not exists public.direct_notes (id int primary key, body text)',
    );
  });

  it('answers the rows of a statement with ? placeholders, typed as knex answers them', async () => {
    const rows = await queryRows<Record<string, unknown>>(
      db.knex,
      `select cast(? as int8) as n, cast(? as date) as day, cast(? as timestamptz) as at,
              cast(? as jsonb) as doc, current_setting('TimeZone') as zone`,
      [41, '2024-02-29', new Date('2026-01-02T03:04:05.678Z'), JSON.stringify({ a: [1] })],
    );
    expect(rows).toEqual([
      {
        n: 41,
        day: '2024-02-29',
        at: new Date('2026-01-02T03:04:05.678Z'),
        doc: { a: [1] },
        zone: 'UTC',
      },
    ]);
  });

  it('runs inside the transaction it is given, and outside any otherwise', async () => {
    await db.knex('public.direct_notes').del();
    await db.knex
      .transaction(async (trx) => {
        await queryRows(trx, 'insert into public.direct_notes (id, body) values (?, ?)', [1, 'in']);
        const seen = await queryRows<{ body: string }>(
          trx,
          'select body from public.direct_notes where id = ?',
          [1],
        );
        expect(seen).toEqual([{ body: 'in' }]);
        await trx.rollback();
      })
      .catch(() => undefined);
    expect(await queryRows(db.knex, 'select * from public.direct_notes', [])).toEqual([]);
    await queryRows(db.knex, 'insert into public.direct_notes (id, body) values (?, ?)', [
      2,
      'out',
    ]);
    expect(await db.knex('public.direct_notes').select('id', 'body')).toEqual([
      { id: 2, body: 'out' },
    ]);
  });

  it('reports SQL errors with their SQLSTATE code', async () => {
    await expect(
      queryRows(db.knex, 'insert into public.direct_notes (id, body) values (?, ?)', [2, 'again']),
    ).rejects.toMatchObject({ code: '23505' });
  });
});

describe('queryRows on PostgreSQL', () => {
  it("emits knex's query events, so tracing, the user-status watch and counters see it", async () => {
    const { url } = await harness.newPostgresDatabase();
    const db = await harness.connect({ url });
    const seen: string[] = [];
    type Event = { __knexQueryUid: string; sql: string };
    db.knex.on('query', (event: Event) => seen.push(`query ${event.__knexQueryUid} ${event.sql}`));
    db.knex.on('query-response', (_rows: unknown, event: Event) =>
      seen.push(`response ${event.__knexQueryUid}`),
    );
    db.knex.on('query-error', (error: { code?: string }, event: Event) =>
      seen.push(`error ${event.__knexQueryUid} ${error.code}`),
    );
    await queryRows(db.knex, 'select ?::int as one', [1]);
    await queryRows(db.knex, 'select * from public.missing where id = ?', [1]).catch(
      () => undefined,
    );
    expect(seen).toEqual([
      'query direct:1 select ?::int as one',
      'response direct:1',
      'query direct:2 select * from public.missing where id = ?',
      'error direct:2 42P01',
    ]);
  });

  it('keeps the statement timeout of the database', async () => {
    const { url } = await harness.newPostgresDatabase();
    const db = await harness.connect({ url, statementTimeoutMs: 150 });
    // 57014 is the server's statement time-out: without it pg_sleep(3) would succeed.
    await expect(queryRows(db.knex, 'select pg_sleep(?)', [3])).rejects.toMatchObject({
      code: '57014',
    });
  });

  it('fails as a connection failure when the server is not there', async () => {
    const db = await harness.connect({
      url: 'postgres://postgres@127.0.0.1:1/x',
      connectTimeoutMs: 1_000,
    });
    const failure = await queryRows(db.knex, 'select ?::int as one', [1]).catch(
      (error: unknown) => error,
    );
    expect(isConnectionFailure(failure)).toBe(true);
  });
});
