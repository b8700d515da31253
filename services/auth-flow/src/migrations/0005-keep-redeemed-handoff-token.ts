import type { Migration } from '@gateway/db';

// A redeemed handoff keeps its sealed session token until it expires, so that its platform may
// repeat the exchange and get the same answer (spec 4.4; docs/decisions.md). Only the column's
// description changes: rows of either version read the same.
export const keepRedeemedHandoffToken: Migration = {
  async up(knex) {
    await knex.raw(
      "comment on column authflow.handoffs.session_token_encrypted is 'Kept until expires_at " +
        "for a repeated redeem; cleared when the session is gone and once expired'",
    );
  },
  async down(knex) {
    await knex.raw(
      "comment on column authflow.handoffs.session_token_encrypted is 'Cleared when redeemed'",
    );
  },
};
