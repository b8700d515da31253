import type { Migration } from '@gateway/db';

// A handoff code is single use (spec 2.9, 3.2): the redeem clears the sealed session token, and
// a handoff without one is never redeemed again. Handoffs redeemed before keep no token either.
export const clearRedeemedHandoffToken: Migration = {
  async up(knex) {
    await knex.raw(
      'update authflow.handoffs set session_token_encrypted = null where redeemed_at is not null',
    );
    await knex.raw(
      "comment on column authflow.handoffs.session_token_encrypted is 'Cleared when redeemed'",
    );
  },
  async down(knex) {
    await knex.raw(
      "comment on column authflow.handoffs.session_token_encrypted is 'Kept until expires_at " +
        "for a repeated redeem; cleared when the session is gone and once expired'",
    );
  },
};
