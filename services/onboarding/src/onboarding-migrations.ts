import type { SchemaMigrations } from '@gateway/db';
import { createProfiles } from './migrations/0001-create-profiles.js';
import { createFieldDefinitions } from './migrations/0002-create-field-definitions.js';

/**
 * The onboarding service's PostgreSQL schema `onboarding`. Migrations are applied in key order at
 * start (and by `pnpm migrate`); the onboarding issue adds field definitions and values.
 */
export const onboardingMigrations: SchemaMigrations = {
  schema: 'onboarding',
  migrations: {
    '20261201_0001_create_profiles': createProfiles,
    '20261201_0002_create_field_definitions': createFieldDefinitions,
  },
};
