import type { SchemaMigrations } from '@gateway/db';
import { createProfiles } from './migrations/0001-create-profiles.js';
import { createFieldDefinitions } from './migrations/0002-create-field-definitions.js';
import { createOnboardingState } from './migrations/0003-create-onboarding-state.js';
import { createAvatars } from './migrations/0004-create-avatars.js';

/**
 * The onboarding service's PostgreSQL schema `onboarding`. Migrations are applied in key order at
 * start (and by `pnpm migrate`).
 */
export const onboardingMigrations: SchemaMigrations = {
  schema: 'onboarding',
  migrations: {
    '20261201_0001_create_profiles': createProfiles,
    '20261201_0002_create_field_definitions': createFieldDefinitions,
    '20261201_0003_create_onboarding_state': createOnboardingState,
    '20261201_0004_create_avatars': createAvatars,
  },
};
