import type { Migration } from '@gateway/db';

// What the exchange and introspection answer is recorded when the login writes its handoff
// and session, so those hot paths read nothing else (spec 4.4, 4.5). The columns are nullable
// because rows written before this migration had no value for them. The service no longer
// reads such rows: every record it still uses was written with these values (a transaction,
// handoff or session lives at most 12 hours, SESSION_TTL_SECONDS), and a row without them is
// refused as malformed. Rolling deploy: a version that requires them runs only once the last
// version without them has been stopped for 12 hours. A later migration may make the columns
// NOT NULL; this note can go with it, from 2027-01-01.
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
