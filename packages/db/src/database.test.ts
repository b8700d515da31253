import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unusedLocalPort } from '@gateway/testkit';
import { createDatabase } from './create-database.js';
import type { Database } from './database.js';
import { DatabaseUnavailableError } from './errors.js';
import { toCount } from './count.js';
import { migrateSchema, migrationStatus } from './migrations.js';
import type { SchemaMigrations } from './migrations.js';
import { createDriverHarness } from './testing/database-drivers.js';

const harness = createDriverHarness();
afterAll(() => harness.cleanup());

const notesSchema: SchemaMigrations = {
  schema: 'registry',
  migrations: {
    '0001_create_notes': {
      up: async (knex) => {
        await knex.schema.withSchema('registry').createTable('notes', (t) => {
          t.bigIncrements('id');
          t.text('body').notNullable();
          t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
        });
      },
      down: async (knex) => {
        await knex.schema.withSchema('registry').dropTable('notes');
      },
    },
  },
};

async function countNotes(db: Database): Promise<number> {
  const [row] = await db.knex('registry.notes').count('* as total');
  return toCount(row?.total);
}

describe.each(harness.drivers)('Database on $kind', (driver) => {
  let db: Database;
  beforeAll(async () => {
    db = await driver.open();
    await migrateSchema(db, notesSchema);
  });

  it('answers ping', async () => {
    await expect(db.ping()).resolves.toBeUndefined();
    expect(db.kind).toBe(driver.kind);
  });

  it('commits a transaction, and rolls one back when its callback throws', async () => {
    await db.knex('registry.notes').del();
    await db.knex.transaction(async (trx) => {
      await trx('registry.notes').insert({ body: 'kept' });
    });
    await expect(
      db.knex.transaction(async (trx) => {
        await trx('registry.notes').insert({ body: 'discarded' });
        throw new Error('change of mind');
      }),
    ).rejects.toThrow('change of mind');

    expect(await db.knex('registry.notes').pluck('body')).toEqual(['kept']);
  });

  it('keeps uncommitted rows from a query outside the transaction', async () => {
    await db.knex('registry.notes').del();
    const trx = await db.knex.transaction();
    await trx('registry.notes').insert({ body: 'uncommitted' });

    let outsideFinished = false;
    const outside = countNotes(db).then((count) => {
      outsideFinished = true;
      return count;
    });
    if (driver.singleConnection) {
      // PGlite: the one connection belongs to the transaction, so the outside query waits
      // behind it: a statement of the transaction answers while the outside one does not.
      await trx.raw('select 1');
      expect(outsideFinished).toBe(false);
    } else {
      // pg: the outside query has its own connection and answers while the transaction is open.
      expect(await outside).toBe(0);
    }

    await trx.rollback();
    expect(await outside).toBe(0);
    expect(await countNotes(db)).toBe(0);
  });

  it('lets a waiting outside query see rows once the transaction commits (PGlite) or not at all before (pg)', async () => {
    await db.knex('registry.notes').del();
    const trx = await db.knex.transaction();
    await trx('registry.notes').insert({ body: 'committed' });

    let outsideFinished = false;
    const outside = countNotes(db).then((count) => {
      outsideFinished = true;
      return count;
    });
    // pg: the outside query answers on its own connection before the commit. PGlite: it is
    // queued behind the transaction's statements on the one connection.
    if (driver.singleConnection) await trx.raw('select 1');
    else await outside;
    expect(outsideFinished).toBe(!driver.singleConnection);
    await trx.commit();

    expect(await outside).toBe(driver.singleConnection ? 1 : 0);
    expect(await countNotes(db)).toBe(1);
  });

  it('returns the same JavaScript types on both drivers', async () => {
    const result = await db.knex.raw<{
      rows: Array<Record<string, unknown>>;
    }>(
      `select count(*) as total,
              9007199254740993::int8 as huge,
              array[1, 2]::int8[] as ids,
              now() as moment,
              '2024-02-29'::date as day,
              '1 day 02:00:00'::interval as span,
              '\\x0a0b'::bytea as bytes,
              12.50::numeric as amount,
              '{"a": [1, 2]}'::jsonb as doc,
              current_setting('TimeZone') as zone
         from registry.notes`,
    );
    const row = result.rows[0] ?? {};
    expect(row.total).toEqual(expect.any(Number));
    expect(row.huge).toBe(9007199254740993n);
    expect(row.ids).toEqual([1, 2]);
    expect(row.moment).toBeInstanceOf(Date);
    expect(row.day).toBe('2024-02-29');
    expect(row.span).toBe('1 day 02:00:00');
    expect(Buffer.isBuffer(row.bytes)).toBe(true);
    expect(row.bytes).toEqual(Buffer.from([10, 11]));
    expect(row.amount).toBe('12.50');
    expect(row.doc).toEqual({ a: [1, 2] });
    expect(row.zone).toBe('UTC');
  });

  it('round-trips inserted values and reports affected row counts', async () => {
    await db.knex('registry.notes').del();
    const at = new Date('2026-01-02T03:04:05.678Z');
    const [inserted] = await db
      .knex('registry.notes')
      .insert({ body: 'typed', created_at: at })
      .returning(['id', 'created_at']);
    expect(inserted?.id).toEqual(expect.any(Number));
    expect(inserted?.created_at).toEqual(at);

    await db.knex('registry.notes').insert([{ body: 'x' }, { body: 'y' }]);
    expect(await db.knex('registry.notes').whereIn('body', ['x', 'y']).update({ body: 'z' })).toBe(
      2,
    );
    expect(await db.knex('registry.notes').where({ body: 'z' }).del()).toBe(2);
    expect(await db.knex('registry.notes').where({ body: 'none' }).del()).toBe(0);
    const [{ total } = { total: undefined }] = await db.knex('registry.notes').count('* as total');
    expect(toCount(total)).toBe(1);
  });

  it('reports SQL errors with their SQLSTATE code', async () => {
    await expect(db.knex('registry.missing').select()).rejects.toMatchObject({ code: '42P01' });
    await expect(
      db.knex('registry.notes').insert({ body: null as unknown as string }),
    ).rejects.toMatchObject({ code: '23502' });
  });
});

describe('createDatabase', () => {
  it('refuses to guess when given no url, dataDir or inMemory', async () => {
    await expect(createDatabase({})).rejects.toThrow(/url .*dataDir .*inMemory/);
  });

  it('sets statement_timeout on PostgreSQL connections when asked', async () => {
    const { url } = await harness.newPostgresDatabase();
    const db = await harness.connect({ url, statementTimeoutMs: 150 });
    // 57014 is the server's statement time-out: without it pg_sleep(3) would succeed.
    await expect(db.knex.raw('select pg_sleep(3)')).rejects.toMatchObject({ code: '57014' });
  });
});

describe('ping against a database that is not there', () => {
  it('rejects with DatabaseUnavailableError when nothing listens', async () => {
    const db = await harness.connect({ url: 'postgres://postgres@127.0.0.1:1/x' });
    const failure = db.ping(1_000);
    await expect(failure).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(failure).rejects.toHaveProperty('cause');
  });

  it('makes migration helpers fail with DatabaseUnavailableError too', async () => {
    const db = await harness.connect({
      url: 'postgres://postgres@127.0.0.1:1/x',
      connectTimeoutMs: 1_000,
    });
    await expect(migrateSchema(db, notesSchema)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(migrationStatus(db, notesSchema)).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  describe('when the server accepts connections but never answers', () => {
    let server: Server;
    const sockets = new Set<Socket>();
    let port: number;

    beforeAll(async () => {
      port = await unusedLocalPort();
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    });

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('rejects with DatabaseUnavailableError once the timeout passes', async () => {
      const db = await harness.connect({
        url: `postgres://postgres@127.0.0.1:${port}/x`,
        connectTimeoutMs: 1_000,
      });
      const started = Date.now();
      const failure = db.ping(300);
      await expect(failure).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await expect(failure).rejects.toThrow('Database did not answer within 300 ms');
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(290);
    });
  });
});

describe('PGlite on disk', () => {
  let tempRoot: string;
  beforeAll(async () => {
    tempRoot = await mkdtemp(join(tmpdir(), 'gateway-db-test-'));
  });
  afterAll(async () => {
    await rm(tempRoot, { recursive: true, force: true });
  });

  it('keeps data and migration history across close and reopen', async () => {
    const dataDir = join(tempRoot, 'not', 'yet', 'there');
    const first = await createDatabase({ dataDir });
    try {
      await migrateSchema(first, notesSchema);
      await first.knex('registry.notes').insert({ body: 'survives a restart' });
    } finally {
      await first.close();
    }

    const reopened = await createDatabase({ dataDir });
    try {
      expect(reopened.kind).toBe('pglite');
      expect(await reopened.knex('registry.notes').pluck('body')).toEqual(['survives a restart']);
      expect(await migrationStatus(reopened, notesSchema)).toEqual({
        applied: ['0001_create_notes'],
        pending: [],
      });
      expect(await migrateSchema(reopened, notesSchema)).toEqual([]);
    } finally {
      await reopened.close();
    }
  });
});
