import { describe, it, expect, afterAll } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { Database } from './database.js';
import { migrateSchema, migrationStatus, rollbackSchema } from './migrations.js';
import type { Migration, SchemaMigrations } from './migrations.js';
import { toCount } from './count.js';
import { createDriverHarness } from './testing/database-drivers.js';

const harness = createDriverHarness();
afterAll(() => harness.cleanup());

/** A migration that creates `<schema>.<table>` with a text column `note`. */
function createTable(schema: string, table: string): Migration {
  return {
    up: async (knex) => {
      await knex.schema.withSchema(schema).createTable(table, (t) => {
        t.increments('id');
        t.text('note');
      });
    },
    down: async (knex) => {
      await knex.schema.withSchema(schema).dropTable(table);
    },
  };
}

/** A migration that inserts `note` into `<schema>.log` (and deletes it on the way down). */
function logNote(schema: string, note: string, pauseMs = 0): Migration {
  return {
    up: async (knex) => {
      if (pauseMs > 0) await knex.raw('select pg_sleep(?)', [pauseMs / 1000]);
      await knex(`${schema}.log`).insert({ note });
    },
    down: async (knex) => {
      await knex(`${schema}.log`).where({ note }).del();
    },
  };
}

async function tableExists(knex: Knex, schema: string, table: string): Promise<boolean> {
  const row: unknown = await knex('pg_catalog.pg_tables')
    .where({ schemaname: schema, tablename: table })
    .first();
  return row !== undefined;
}

async function notes(knex: Knex, schema: string): Promise<string[]> {
  return knex(`${schema}.log`).orderBy('id').pluck<string[]>('note');
}

async function recorded(knex: Knex, schema: string): Promise<string[]> {
  return knex(`${schema}.knex_migrations`).orderBy('id').pluck<string[]>('name');
}

describe.each(harness.drivers)('migrations on $kind', (driver) => {
  it('applies migrations in name order into their schema and records them there', async () => {
    const db = await driver.open();
    const set: SchemaMigrations = {
      schema: 'registry',
      // Deliberately not in order: keys are applied sorted.
      migrations: {
        '20261122_0003_note_two': logNote('registry', 'two'),
        '20261122_0001_create_log': createTable('registry', 'log'),
        '20261122_0002_note_one': logNote('registry', 'one'),
      },
    };

    const applied = await migrateSchema(db, set);

    expect(applied).toEqual([
      '20261122_0001_create_log',
      '20261122_0002_note_one',
      '20261122_0003_note_two',
    ]);
    expect(await notes(db.knex, 'registry')).toEqual(['one', 'two']);
    expect(await tableExists(db.knex, 'registry', 'log')).toBe(true);
    expect(await tableExists(db.knex, 'public', 'log')).toBe(false);
    expect(await tableExists(db.knex, 'public', 'knex_migrations')).toBe(false);
    expect(await recorded(db.knex, 'registry')).toEqual(applied);
  });

  it('applies nothing when run again, and only what is new later', async () => {
    const db = await driver.open();
    const first: SchemaMigrations = {
      schema: 'onboarding',
      migrations: { '0001_create_log': createTable('onboarding', 'log') },
    };
    const later: SchemaMigrations = {
      schema: 'onboarding',
      migrations: { ...first.migrations, '0002_note': logNote('onboarding', 'added later') },
    };

    expect(await migrateSchema(db, first)).toEqual(['0001_create_log']);
    expect(await migrateSchema(db, first)).toEqual([]);
    expect(await migrationStatus(db, later)).toEqual({
      applied: ['0001_create_log'],
      pending: ['0002_note'],
    });
    expect(await migrateSchema(db, later)).toEqual(['0002_note']);
    expect(await migrateSchema(db, later)).toEqual([]);
    expect(await notes(db.knex, 'onboarding')).toEqual(['added later']);
    expect(await migrationStatus(db, later)).toEqual({
      applied: ['0001_create_log', '0002_note'],
      pending: [],
    });
  });

  it('reports everything pending for a schema that does not exist yet, creating nothing', async () => {
    const db = await driver.open();
    const set: SchemaMigrations = {
      schema: 'authflow',
      migrations: { '0001_create_log': createTable('authflow', 'log') },
    };
    expect(await migrationStatus(db, set)).toEqual({ applied: [], pending: ['0001_create_log'] });
    const schemas = await db
      .knex('pg_catalog.pg_namespace')
      .where({ nspname: 'authflow' })
      .pluck<string[]>('nspname');
    expect(schemas).toEqual([]);
    expect(await rollbackSchema(db, set)).toEqual([]);
  });

  it('rolls back the last batch by running down, or everything with all', async () => {
    const db = await driver.open();
    const batchOne = {
      '0001_create_log': createTable('authflow', 'log'),
      '0002_note_a': logNote('authflow', 'a'),
    };
    const set: SchemaMigrations = {
      schema: 'authflow',
      migrations: { ...batchOne, '0003_note_b': logNote('authflow', 'b') },
    };
    await migrateSchema(db, { schema: 'authflow', migrations: batchOne });
    await migrateSchema(db, set);
    expect(await notes(db.knex, 'authflow')).toEqual(['a', 'b']);

    expect(await rollbackSchema(db, set)).toEqual(['0003_note_b']);
    expect(await notes(db.knex, 'authflow')).toEqual(['a']);
    expect(await migrationStatus(db, set)).toEqual({
      applied: ['0001_create_log', '0002_note_a'],
      pending: ['0003_note_b'],
    });

    expect(await rollbackSchema(db, set, { all: true })).toEqual([
      '0002_note_a',
      '0001_create_log',
    ]);
    expect(await tableExists(db.knex, 'authflow', 'log')).toBe(false);
    expect(await migrationStatus(db, set)).toEqual({
      applied: [],
      pending: ['0001_create_log', '0002_note_a', '0003_note_b'],
    });
    // And forward again.
    expect(await migrateSchema(db, set)).toHaveLength(3);
  });

  it('migrates two schemas on one database independently', async () => {
    const db = await driver.open();
    const registry: SchemaMigrations = {
      schema: 'registry',
      migrations: {
        '0001_create_log': createTable('registry', 'log'),
        '0002_note': logNote('registry', 'registry note'),
      },
    };
    const onboarding: SchemaMigrations = {
      schema: 'onboarding',
      migrations: { '0001_create_log': createTable('onboarding', 'log') },
    };

    const [registryApplied, onboardingApplied] = await Promise.all([
      migrateSchema(db, registry),
      migrateSchema(db, onboarding),
    ]);

    expect(registryApplied).toEqual(['0001_create_log', '0002_note']);
    expect(onboardingApplied).toEqual(['0001_create_log']);
    expect(await recorded(db.knex, 'registry')).toEqual(['0001_create_log', '0002_note']);
    expect(await recorded(db.knex, 'onboarding')).toEqual(['0001_create_log']);

    await rollbackSchema(db, registry, { all: true });
    expect(await tableExists(db.knex, 'registry', 'log')).toBe(false);
    expect(await tableExists(db.knex, 'onboarding', 'log')).toBe(true);
    expect(await migrationStatus(db, onboarding)).toEqual({
      applied: ['0001_create_log'],
      pending: [],
    });
  });

  it('leaves the schema as it was when a migration fails, and surfaces the error', async () => {
    const db = await driver.open();
    const good = { '0001_create_log': createTable('registry', 'log') };
    await migrateSchema(db, { schema: 'registry', migrations: good });
    await db.knex('registry.log').insert({ note: 'before' });

    const failing: SchemaMigrations = {
      schema: 'registry',
      migrations: {
        ...good,
        '0002_create_other': createTable('registry', 'other'),
        '0003_note': logNote('registry', 'inside the failed batch'),
        '0004_broken': {
          up: async (knex) => {
            await knex.schema.withSchema('registry').createTable('half_done', (t) => t.text('x'));
            throw new Error('boom in 0004');
          },
          down: async () => {},
        },
      },
    };
    await expect(migrateSchema(db, failing)).rejects.toThrow('boom in 0004');

    expect(await tableExists(db.knex, 'registry', 'other')).toBe(false);
    expect(await tableExists(db.knex, 'registry', 'half_done')).toBe(false);
    expect(await notes(db.knex, 'registry')).toEqual(['before']);
    expect(await migrationStatus(db, failing)).toEqual({
      applied: ['0001_create_log'],
      pending: ['0002_create_other', '0003_note', '0004_broken'],
    });

    const badSql: SchemaMigrations = {
      schema: 'registry',
      migrations: {
        ...good,
        '0002_bad_sql': {
          up: async (knex) => {
            await knex.raw('insert into registry.no_such_table values (1)');
          },
          down: async () => {},
        },
      },
    };
    await expect(migrateSchema(db, badSql)).rejects.toMatchObject({ code: '42P01' });
    // The lock was released: a correct set still applies.
    const fixed = { ...failing.migrations, '0004_broken': logNote('registry', 'fixed') };
    expect(await migrateSchema(db, { schema: 'registry', migrations: fixed })).toEqual([
      '0002_create_other',
      '0003_note',
      '0004_broken',
    ]);
  });

  it('applies each migration once when called concurrently on one Database', async () => {
    const db = await driver.open();
    const set: SchemaMigrations = {
      schema: 'registry',
      migrations: {
        '0001_create_log': createTable('registry', 'log'),
        '0002_note': logNote('registry', 'once', 100),
      },
    };
    const results = await Promise.all([migrateSchema(db, set), migrateSchema(db, set)]);
    expect(results.flat().sort()).toEqual(['0001_create_log', '0002_note']);
    expect(await notes(db.knex, 'registry')).toEqual(['once']);
  });

  it("waits while knex's migration lock is held, then applies", async () => {
    const db = await driver.open();
    const first = { '0001_create_log': createTable('registry', 'log') };
    const set: SchemaMigrations = {
      schema: 'registry',
      migrations: { ...first, '0002_note': logNote('registry', 'after the wait') },
    };
    await migrateSchema(db, { schema: 'registry', migrations: first });
    await db.knex('registry.knex_migrations_lock').update({ is_locked: 1 });

    const started = Date.now();
    const migrating = migrateSchema(db, set, { lockTimeoutMs: 15_000 });
    await sleep(700);
    expect(await migrationStatus(db, set)).toEqual({
      applied: ['0001_create_log'],
      pending: ['0002_note'],
    });
    await db.knex('registry.knex_migrations_lock').update({ is_locked: 0 });

    expect(await migrating).toEqual(['0002_note']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(await notes(db.knex, 'registry')).toEqual(['after the wait']);
  });

  it('gives up with a clear error when the lock stays held past lockTimeoutMs', async () => {
    const db = await driver.open();
    const first = { '0001_create_log': createTable('registry', 'log') };
    await migrateSchema(db, { schema: 'registry', migrations: first });
    await db.knex('registry.knex_migrations_lock').update({ is_locked: 1 });

    const started = Date.now();
    await expect(
      migrateSchema(
        db,
        { schema: 'registry', migrations: { ...first, '0002_note': logNote('registry', 'x') } },
        { lockTimeoutMs: 800 },
      ),
    ).rejects.toThrow(/stayed locked .*is_locked = 0/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects schema names that are not plain identifiers', async () => {
    const db = await driver.open();
    await expect(migrateSchema(db, { schema: 'Registry; drop', migrations: {} })).rejects.toThrow(
      'Invalid schema name',
    );
  });
});

describe('migrations from several processes on one PostgreSQL database', () => {
  it('all succeed and each migration is applied once', async () => {
    const { url } = await harness.newPostgresDatabase();
    // Separate Database objects behave like separate processes: their own pools, no shared
    // in-process state except the PostgreSQL server.
    const instances: Database[] = await Promise.all(
      [1, 2, 3].map((_, index) => harness.connect({ url, poolMax: index === 0 ? 1 : 4 })),
    );
    const set: SchemaMigrations = {
      schema: 'registry',
      migrations: {
        '0001_create_log': createTable('registry', 'log'),
        '0002_slow_note': logNote('registry', 'slow', 300),
        '0003_note': logNote('registry', 'last'),
      },
    };

    const results = await Promise.all(instances.map((db) => migrateSchema(db, set)));

    expect(results.flat().sort()).toEqual(['0001_create_log', '0002_slow_note', '0003_note']);
    const [db] = instances;
    if (!db) throw new Error('no instance');
    expect(await notes(db.knex, 'registry')).toEqual(['slow', 'last']);
    expect(await recorded(db.knex, 'registry')).toEqual([
      '0001_create_log',
      '0002_slow_note',
      '0003_note',
    ]);
    const lockRows = await db.knex('registry.knex_migrations_lock').count('* as rows');
    expect(toCount(lockRows[0]?.rows)).toBe(1);
  });
});
