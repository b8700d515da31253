import { afterAll, describe, expect, it } from '@jest/globals';
import { createDatabase, migrateSchema, rollbackSchema, type Database } from '@gateway/db';
import { createTestDatabase, type TestDatabase } from '@gateway/testkit';
import { appendAuditRecord, listAuditRecords, matchingAuditRecords } from '../audit-log.js';
import { registryMigrations } from '../registry-migrations.js';

// Migration 0004 on PostgreSQL and on the embedded PGlite: applied after 0003 on a log that
// has records, the audit query's actor filter can use its indexes (the planner, told to avoid
// sequential scans, picks them: the expressions match), and `down` removes them.

const NEW = '20261127_0004_audit_filter_indexes';
const INDEXES = [
  'audit_records_actor_client_id_index',
  'audit_records_actor_email_index',
  'audit_records_actor_subject_index',
];
const before = {
  schema: registryMigrations.schema,
  migrations: Object.fromEntries(
    Object.entries(registryMigrations.migrations).filter(([name]) => name < NEW),
  ),
};

let testDb: TestDatabase | undefined;
afterAll(async () => {
  await testDb?.drop();
});

const drivers: [string, () => Promise<Database>][] = [
  [
    'PostgreSQL',
    async () => {
      testDb = await createTestDatabase();
      return createDatabase({ url: testDb.url });
    },
  ],
  ['PGlite', () => createDatabase({ inMemory: true })],
];

async function actorIndexes(db: Database): Promise<string[]> {
  const rows = (await db
    .knex('pg_indexes')
    .where({ schemaname: 'registry', tablename: 'audit_records' })
    .whereIn('indexname', INDEXES)
    .orderBy('indexname')
    .pluck('indexname')) as string[];
  return rows;
}

/** The plan of the actor filter's count, with sequential scans priced out. */
async function actorPlan(db: Database, actor: string): Promise<string> {
  return db.knex.transaction(async (trx) => {
    await trx.raw('set local enable_seqscan = off');
    const { sql, bindings } = matchingAuditRecords(trx, { actor }).count({ count: '*' }).toSQL();
    const result = (await trx.raw(`explain ${sql}`, bindings)) as {
      rows: { 'QUERY PLAN': string }[];
    };
    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

describe.each(drivers)('registry migration 0004 on %s', (_name, open) => {
  it('adds the actor indexes to a log with records, the filter uses them, and down drops them', async () => {
    const db = await open();
    try {
      await migrateSchema(db, before);
      await appendAuditRecord(db.knex, {
        kind: 'user_role.granted',
        actor: {
          kind: 'user',
          subject: 'sub-1',
          clientId: '',
          environmentKey: 'PROD',
          email: 'Admin@Example.com',
        },
        requestId: 'r1',
        target: { type: 'user', id: 'u1', key: 'alice@example.com' },
      });

      expect(await migrateSchema(db, registryMigrations)).toEqual([NEW]);
      expect(await actorIndexes(db)).toEqual(INDEXES);
      const found = await listAuditRecords(db.knex, {
        actor: 'admin@example.com',
        page: 1,
        pageSize: 10,
      });
      expect(found.items.map((item) => item.request_id)).toEqual(['r1']);
      const plan = await actorPlan(db, 'admin@example.com');
      for (const index of INDEXES) expect(plan).toContain(index);

      expect(await rollbackSchema(db, registryMigrations)).toEqual([NEW]);
      expect(await actorIndexes(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
