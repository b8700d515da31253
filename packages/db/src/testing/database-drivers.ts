// Test support: the two drivers every shared suite runs against, each giving a fresh Database.
import { createTestDatabase } from '@gateway/testkit';
import type { TestDatabase } from '@gateway/testkit';
import { createDatabase } from '../create-database.js';
import type { CreateDatabaseOptions, Database, DatabaseKind } from '../database.js';

export type DatabaseDriver = {
  kind: DatabaseKind;
  /** PGlite: one connection, so a query outside an open transaction waits for it. */
  singleConnection: boolean;
  /** A fresh, empty Database (its own PostgreSQL database, or a new in-memory PGlite). */
  open(): Promise<Database>;
};

export type DriverHarness = {
  drivers: DatabaseDriver[];
  /** A fresh PostgreSQL test database (dropped by cleanup). */
  newPostgresDatabase(): Promise<TestDatabase>;
  /** createDatabase, closed by cleanup. */
  connect(options: CreateDatabaseOptions): Promise<Database>;
  /** Closes every Database and drops every test database made through this harness. */
  cleanup(): Promise<void>;
};

export function createDriverHarness(): DriverHarness {
  const databases: Database[] = [];
  const testDatabases: TestDatabase[] = [];

  const connect = async (options: CreateDatabaseOptions): Promise<Database> => {
    const database = await createDatabase(options);
    databases.push(database);
    return database;
  };
  const newPostgresDatabase = async (): Promise<TestDatabase> => {
    const testDatabase = await createTestDatabase();
    testDatabases.push(testDatabase);
    return testDatabase;
  };

  return {
    drivers: [
      {
        kind: 'postgres',
        singleConnection: false,
        open: async () => connect({ url: (await newPostgresDatabase()).url }),
      },
      { kind: 'pglite', singleConnection: true, open: () => connect({ inMemory: true }) },
    ],
    newPostgresDatabase,
    connect,
    cleanup: async () => {
      await Promise.all(databases.map((database) => database.close()));
      await Promise.all(testDatabases.map((testDatabase) => testDatabase.drop()));
    },
  };
}
