// Test support: the onboarding service on a real database (its own PostgreSQL database, or
// an in-memory PGlite), called through Connect as the auth-flow service and the edge call it.
// Several instances can run on the same data, each with its own schema cache (and, on
// PostgreSQL, its own pool), as several onboarding processes do in split mode.
import type { Client } from '@connectrpc/connect';
import { OnboardingService, ProfileService } from '@gateway/contracts';
import { createDatabase, migrateSchema, type Database, type DatabaseKind } from '@gateway/db';
import { connectService, createServiceInterceptors } from '@gateway/rpc';
import { createLogger } from '@gateway/telemetry';
import { createTestDatabase, type TestDatabase } from '@gateway/testkit';
import { onboardingMigrations } from '../onboarding-migrations.js';
import { createOnboardingImplementations } from '../onboarding-service.js';

export type OnboardingInstance = {
  onboarding: Client<typeof OnboardingService>;
  profiles: Client<typeof ProfileService>;
  db: Database;
  /** Runs `call` and returns what it answered with the SQL statements this instance sent. */
  statementsOf<T>(call: () => Promise<T>): Promise<{ answer: T; statements: string[] }>;
};

export type OnboardingHarness = {
  kind: DatabaseKind;
  /** A new onboarding instance on the same data (own schema cache). */
  instance(options?: { schemaCacheTtlMs?: number }): Promise<OnboardingInstance>;
  close(): Promise<void>;
};

const logger = createLogger({ service: 'onboarding-test', level: 'silent' });

function instanceOn(db: Database, schemaCacheTtlMs: number | undefined): OnboardingInstance {
  const implementations = createOnboardingImplementations({
    db,
    probeTimeoutMs: 2_000,
    ...(schemaCacheTtlMs === undefined ? {} : { schemaCacheTtlMs }),
  });
  const connection = connectService(
    { kind: 'in-process', implementations, serverInterceptors: createServiceInterceptors(logger) },
    { timeoutMs: 10_000 },
  );
  const statements: string[] = [];
  let recording = false;
  db.knex.on('query', (query: { sql: string }) => {
    if (recording) statements.push(query.sql);
  });
  return {
    onboarding: connection.client(OnboardingService),
    profiles: connection.client(ProfileService),
    db,
    async statementsOf(call) {
      statements.length = 0;
      recording = true;
      try {
        const answer = await call();
        return { answer, statements: [...statements] };
      } finally {
        recording = false;
      }
    },
  };
}

async function openPostgres(): Promise<OnboardingHarness> {
  const testDatabase: TestDatabase = await createTestDatabase();
  const databases: Database[] = [];
  const connect = async () => {
    const db = await createDatabase({ url: testDatabase.url, poolMax: 10 });
    databases.push(db);
    return db;
  };
  await migrateSchema(await connect(), onboardingMigrations);
  return {
    kind: 'postgres',
    instance: async (options = {}) => instanceOn(await connect(), options.schemaCacheTtlMs),
    async close() {
      for (const db of databases) await db.close();
      await testDatabase.drop();
    },
  };
}

async function openPglite(): Promise<OnboardingHarness> {
  // One embedded database per process: the instances share it (and its one connection).
  const db = await createDatabase({ inMemory: true });
  await migrateSchema(db, onboardingMigrations);
  return {
    kind: 'pglite',
    instance: (options = {}) => Promise.resolve(instanceOn(db, options.schemaCacheTtlMs)),
    close: () => db.close(),
  };
}

export const onboardingHarnesses: { name: string; open(): Promise<OnboardingHarness> }[] = [
  { name: 'PostgreSQL', open: openPostgres },
  { name: 'PGlite', open: openPglite },
];
