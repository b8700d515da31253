import type { SchemaMigrations } from '@gateway/db';
import { createLoginFlowTables } from './migrations/0001-create-login-flow-tables.js';
import { createUsersAndRoles } from './migrations/0002-create-users-and-roles.js';
import { notifyUserStatus } from './migrations/0003-notify-user-status.js';
import { addHotPathSnapshots } from './migrations/0004-add-hot-path-snapshots.js';
import { keepRedeemedHandoffToken } from './migrations/0005-keep-redeemed-handoff-token.js';
import { clearRedeemedHandoffToken } from './migrations/0006-clear-redeemed-handoff-token.js';
import { addIdentitySessionsAndAcceptedOnce } from './migrations/0007-add-identity-sessions-and-accepted-once.js';

/**
 * The auth-flow service's PostgreSQL schema `authflow` (local users, roles; and, in the
 * embedded default without Redis, the SQL implementation of the transaction store).
 * Migrations are applied in key order at start.
 */
export const authFlowMigrations: SchemaMigrations = {
  schema: 'authflow',
  migrations: {
    '20261201_0001_create_login_flow_tables': createLoginFlowTables,
    '20261201_0002_create_users_and_roles': createUsersAndRoles,
    '20261201_0003_notify_user_status': notifyUserStatus,
    '20261201_0004_add_hot_path_snapshots': addHotPathSnapshots,
    '20261201_0005_keep_redeemed_handoff_token': keepRedeemedHandoffToken,
    '20261201_0006_clear_redeemed_handoff_token': clearRedeemedHandoffToken,
    '20261201_0007_add_identity_sessions_and_accepted_once': addIdentitySessionsAndAcceptedOnce,
  },
};
