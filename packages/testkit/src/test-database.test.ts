import { describe, it, expect, afterAll } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, TEMPLATE_DATABASE_PREFIX } from './test-database.js';
import type { TestDatabase, TestDatabaseTemplate } from './test-database.js';
import { randomHex } from './random-name.js';
import { postgresAdminUrl, withPostgresClient } from './postgres-admin.js';

const created: TestDatabase[] = [];

async function newDatabase(template?: TestDatabaseTemplate): Promise<TestDatabase> {
  const database = await createTestDatabase(template === undefined ? {} : { template });
  created.push(database);
  return database;
}

async function databaseExists(name: string): Promise<boolean> {
  return withPostgresClient(await postgresAdminUrl(), async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    return rowCount === 1;
  });
}

afterAll(async () => {
  await Promise.all(created.map((database) => database.drop()));
});

describe('createTestDatabase', () => {
  it('creates a reachable database with a gw_t_ name', async () => {
    const database = await newDatabase();
    expect(database.name).toMatch(/^gw_t_[0-9a-f]+$/);
    const current = await withPostgresClient(database.url, async (client) => {
      const { rows } = await client.query<{ name: string }>('select current_database() as name');
      return rows[0]?.name;
    });
    expect(current).toBe(database.name);
  });

  it('keeps databases isolated from each other', async () => {
    const [first, second] = await Promise.all([newDatabase(), newDatabase()]);
    expect(first.name).not.toBe(second.name);
    await withPostgresClient(first.url, (client) =>
      client.query('create table only_here (id int)'),
    );
    const visibleInSecond = await withPostgresClient(second.url, async (client) => {
      const { rows } = await client.query<{ found: string | null }>(
        "select to_regclass('public.only_here')::text as found",
      );
      return rows[0]?.found;
    });
    expect(visibleInSecond).toBeNull();
  });

  it('drop removes the database even while a connection is still open', async () => {
    const database = await newDatabase();
    const lingering = new pg.Client({ connectionString: database.url });
    lingering.on('error', () => {});
    await lingering.connect();
    expect(await databaseExists(database.name)).toBe(true);

    await database.drop();

    expect(await databaseExists(database.name)).toBe(false);
    await lingering.end().catch(() => {});
    await expect(database.drop()).resolves.toBeUndefined();
  });
});

describe('createTestDatabase with a template', () => {
  /** A template that creates table `prepared` with one row, counting its preparations. */
  function countingTemplate() {
    const template = {
      key: `t${randomHex()}`,
      preparations: 0,
      async prepare(url: string) {
        template.preparations += 1;
        await withPostgresClient(url, (client) =>
          client.query(
            'create table prepared (note text); insert into prepared values ($$ready$$)',
          ),
        );
      },
    };
    return template;
  }

  const notesIn = (database: TestDatabase) =>
    withPostgresClient(database.url, async (client) => {
      const { rows } = await client.query<{ note: string }>('select note from prepared');
      return rows.map((row) => row.note);
    });

  it('starts every database with what prepare made, preparing once per test run', async () => {
    const template = countingTemplate();
    const [first, second] = await Promise.all([newDatabase(template), newDatabase(template)]);
    const third = await newDatabase(template);

    for (const database of [first, second, third]) {
      expect(database.name).toMatch(/^gw_t_[0-9a-f]+$/);
      expect(await notesIn(database)).toEqual(['ready']);
    }
    // The run's global setup names the run; its teardown drops the template.
    expect(process.env.GATEWAY_TEST_RUN_ID).toMatch(/^[0-9a-f]+$/);
    expect(template.preparations).toBe(1);
    expect(
      await databaseExists(
        `${TEMPLATE_DATABASE_PREFIX}${process.env.GATEWAY_TEST_RUN_ID}_${template.key}`,
      ),
    ).toBe(true);
  });

  it('keeps the copies independent of each other', async () => {
    const template = countingTemplate();
    const [first, second] = await Promise.all([newDatabase(template), newDatabase(template)]);
    await withPostgresClient(first.url, (client) =>
      client.query("insert into prepared values ('only in the first')"),
    );
    expect(await notesIn(first)).toEqual(['ready', 'only in the first']);
    expect(await notesIn(second)).toEqual(['ready']);
  });
});
