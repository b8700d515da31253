import type { SchemaMigrations } from '@gateway/db';

/**
 * The onboarding service's PostgreSQL schema `onboarding`. Migrations are applied in key order at
 * start (and by `pnpm migrate`); the issues that build each feature add them here.
 */
export const onboardingMigrations: SchemaMigrations = {
  schema: 'onboarding',
  migrations: {},
};
