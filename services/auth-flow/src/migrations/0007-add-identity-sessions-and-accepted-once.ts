import type { Migration } from '@gateway/db';

// Back-channel logout (OpenID Connect Back-Channel Logout 1.0): a logout token names the
// identity provider's session (`sid`) or its user (`sub`), and is accepted once (its `jti`).
// - sessions.identity_session_id: the `sid` of the ID token the session was signed in with;
//   null when the token had none, and for the sessions stored before this migration. The
//   partial index finds an environment's sessions of one identity session without a scan.
// - accepted_once: keys seen once, until their expiry (acceptOnce); rows past expires_at are
//   deleted by the next acceptOnce and by purgeExpired.
export const addIdentitySessionsAndAcceptedOnce: Migration = {
  async up(knex) {
    await knex.schema.withSchema('authflow').alterTable('sessions', (t) => {
      t.text('identity_session_id')
        .nullable()
        .comment('The sid claim of the ID token at sign-in (Back-Channel Logout 1.0 §2.1)');
    });
    await knex.raw(
      'create index sessions_environment_identity_session_index on authflow.sessions ' +
        '(environment_key, identity_session_id) where identity_session_id is not null',
    );
    await knex.schema.withSchema('authflow').createTable('accepted_once', (t) => {
      t.text('key').primary().comment('A key accepted once, such as a logout token jti');
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.index(['expires_at']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('authflow').dropTable('accepted_once');
    await knex.raw('drop index authflow.sessions_environment_identity_session_index');
    await knex.schema.withSchema('authflow').alterTable('sessions', (t) => {
      t.dropColumn('identity_session_id');
    });
  },
};
