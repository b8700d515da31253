import type { SchemaMigrations } from '@gateway/db';

/**
 * The auth-flow service's PostgreSQL schema `authflow` (local users, roles; and, in the
 * embedded default without Redis, the SQL implementation of the transaction store).
 * Migrations are applied in key order at start; the login-flow issue adds them.
 */
export const authFlowMigrations: SchemaMigrations = {
  schema: 'authflow',
  migrations: {},
};
