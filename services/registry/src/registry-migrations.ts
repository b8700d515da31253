import type { SchemaMigrations } from '@gateway/db';
import { createRegistryTables } from './migrations/0001-create-registry-tables.js';
import { dropRequirementVersion } from './migrations/0002-drop-requirement-version.js';
import { addPlatformSessionPolicy } from './migrations/0003-platform-session-policy.js';
import { addAuditFilterIndexes } from './migrations/0004-audit-filter-indexes.js';

/**
 * The registry service's PostgreSQL schema `registry`. Migrations are applied in key order at
 * start (and by `pnpm migrate`); the issues that build each feature add them here.
 */
export const registryMigrations: SchemaMigrations = {
  schema: 'registry',
  migrations: {
    '20261122_0001_create_registry_tables': createRegistryTables,
    '20261123_0002_drop_requirement_version': dropRequirementVersion,
    '20261124_0003_platform_session_policy': addPlatformSessionPolicy,
    '20261127_0004_audit_filter_indexes': addAuditFilterIndexes,
  },
};
