import { describe, it, expect, afterAll } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from './test-database.js';
import type { TestDatabase } from './test-database.js';
import { postgresAdminUrl, withPostgresClient } from './postgres-admin.js';

const created: TestDatabase[] = [];

async function newDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
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
