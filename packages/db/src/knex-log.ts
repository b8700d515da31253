import type { Knex } from 'knex';

/**
 * What knex would print to the console on its own: a failed migration, a migration lock held
 * elsewhere, deprecations. Each failure that matters already reaches the caller as an error
 * (migrateSchema rethrows it, waits out the lock and then fails with its own message), which the
 * processes log through pino, so knex's console copies would only be noise on stdout.
 */
export const quietKnexLog: Knex.Config['log'] = {
  warn: () => undefined,
  error: () => undefined,
  deprecate: () => undefined,
  debug: () => undefined,
};
