import type { Migration } from '@gateway/db';

// Issue 8: what the exchange and introspection answer is recorded when the login writes its
// handoff and session, so those hot paths read nothing else (spec 4.4, 4.5). Every column is
// nullable: rows written before it keep working through the previous, slower path.
export const addHotPathSnapshots: Migration = {
  async up(knex) {
    await knex.schema.withSchema('authflow').alterTable('transactions', (t) => {
      t.boolean('central_onboarding_enabled')
        .nullable()
        .comment(
          "The platform's centralOnboardingEnabled at start (spec 4.4 canCompleteCentrally)",
        );
    });
    await knex.schema.withSchema('authflow').alterTable('handoffs', (t) => {
      t.text('session_token_hash')
        .nullable()
        .comment('SHA-256 of the pending session token: the redeem refuses a revoked session');
      t.jsonb('snapshot').nullable().comment('The exchange answer at issuance (spec 4.4)');
    });
    await knex.schema.withSchema('authflow').alterTable('sessions', (t) => {
      t.jsonb('snapshot')
        .nullable()
        .comment('Issuer, subject, e-mail and environment tier at creation (spec 4.5)');
    });
  },
  async down(knex) {
    await knex.schema.withSchema('authflow').alterTable('sessions', (t) => {
      t.dropColumn('snapshot');
    });
    await knex.schema.withSchema('authflow').alterTable('handoffs', (t) => {
      t.dropColumn('snapshot');
      t.dropColumn('session_token_hash');
    });
    await knex.schema.withSchema('authflow').alterTable('transactions', (t) => {
      t.dropColumn('central_onboarding_enabled');
    });
  },
};
