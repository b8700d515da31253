import type { Migration } from '@gateway/db';

// The SQL implementation of the auth-flow store (spec 2.7-2.9, 3.1-3.3), used by the embedded
// default (PGlite) instead of Redis. Secrets are stored hashed (state, nonce, handoff code,
// session token) or encrypted (PKCE verifier, pending session token, ID token). Rows past
// their expiry are unusable at once (every query compares expires_at with the caller's clock)
// and deleted later by the store's purgeExpired.
export const createLoginFlowTables: Migration = {
  async up(knex) {
    await knex.schema.withSchema('authflow').createTable('transactions', (t) => {
      t.uuid('id').primary();
      t.text('state_hash').notNullable().unique().comment('SHA-256 of state, base64url');
      t.text('nonce_hash').notNullable();
      t.text('pkce_verifier_encrypted').notNullable();
      t.uuid('platform_id').notNullable();
      t.text('platform_key').notNullable();
      t.text('environment_key').notNullable().comment('Captured at start (spec 4.2)');
      t.text('onboarding_mode').notNullable().comment('none, platform or central');
      t.uuid('redirect_pair_id').notNullable();
      t.text('callback_url').notNullable();
      t.text('return_to').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('expires_at', { useTz: true })
        .notNullable()
        .comment('About 10 minutes after start; a bind extends it so resume can read it');
      t.timestamp('consumed_at', { useTz: true }).nullable();
      t.uuid('user_id').nullable();
      t.uuid('session_id').nullable();
      t.index(['expires_at']);
    });
    await knex.raw(
      "alter table authflow.transactions add constraint transactions_onboarding_mode_check check (onboarding_mode in ('none', 'platform', 'central'))",
    );
    // A redeemed handoff keeps its row (redeemed_at set, the encrypted session token cleared):
    // the unique transaction_id then refuses a second issue for the same transaction, even
    // after redemption, until purgeExpired removes the row once both the handoff and its
    // transaction have expired.
    await knex.schema.withSchema('authflow').createTable('handoffs', (t) => {
      t.text('code_hash').primary().comment('SHA-256 of the handoff_ code, base64url');
      t.uuid('transaction_id').notNullable().unique().comment('At most one handoff (spec 2.9)');
      t.uuid('platform_id').notNullable();
      t.text('platform_key').notNullable();
      t.text('callback_url').notNullable();
      t.uuid('user_id').notNullable();
      t.uuid('session_id').notNullable();
      t.text('session_token_encrypted').nullable().comment('Cleared when redeemed');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('redeemed_at', { useTz: true }).nullable();
      t.index(['expires_at']);
    });
    await knex.schema.withSchema('authflow').createTable('sessions', (t) => {
      t.uuid('id').primary();
      t.text('token_hash').notNullable().unique().comment('SHA-256 of the session token');
      t.uuid('user_id').notNullable();
      t.text('environment_key').notNullable();
      t.text('platform_key').nullable();
      t.jsonb('permissions').notNullable().defaultTo('[]').comment('Snapshot (spec 2.6)');
      t.text('id_token_encrypted').nullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('revoked_at', { useTz: true }).nullable();
      t.index(['user_id']);
      t.index(['expires_at']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('authflow').dropTable('sessions');
    await knex.schema.withSchema('authflow').dropTable('handoffs');
    await knex.schema.withSchema('authflow').dropTable('transactions');
  },
};
