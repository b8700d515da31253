import type { Migration } from '@gateway/db';

// The onboarding service owns requirementVersion (architecture: onboarding holds the field
// definitions, so the counter moves up in the same transaction as the definition change).
export const dropRequirementVersion: Migration = {
  async up(knex) {
    await knex.schema.withSchema('registry').alterTable('platforms', (t) => {
      t.dropColumn('requirement_version');
    });
  },
  async down(knex) {
    await knex.schema.withSchema('registry').alterTable('platforms', (t) => {
      t.integer('requirement_version').notNullable().defaultTo(0);
    });
  },
};
