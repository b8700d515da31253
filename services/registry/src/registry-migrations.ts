import type { SchemaMigrations } from '@gateway/db';

/**
 * The registry service's PostgreSQL schema `registry`. Migrations are applied in key order at
 * start (and by `pnpm migrate`); the issues that build each feature add them here.
 */
export const registryMigrations: SchemaMigrations = {
  schema: 'registry',
  migrations: {},
};
