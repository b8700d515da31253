import type { Migration } from '@gateway/db';

// Spec 2.10-2.14, 3.6, 3.7, 9: the rest of the onboarding state.
// - schema_versions: the requirementVersion of each platform (`platform:<KEY>`) and of the
//   global schema (`global`); bumped in the same transaction as the definition change.
// - global_field_definitions: keyed by the canonical profile key (spec 4.13 global fields).
// - custom_values: CUSTOM_FIELD values, scoped to platform and definition (kept on archive).
// - memberships: a user's onboarding status per platform (NOT_STARTED, IN_PROGRESS, COMPLETE).
export const createOnboardingState: Migration = {
  async up(knex) {
    await knex.schema.withSchema('onboarding').createTable('schema_versions', (t) => {
      t.text('scope').primary().comment('`global` or `platform:<platformKey>`');
      t.integer('version').notNullable();
    });
    await knex.schema.withSchema('onboarding').createTable('global_field_definitions', (t) => {
      t.text('profile_field_key').primary();
      t.jsonb('definition').notNullable();
      t.boolean('active').notNullable().defaultTo(true);
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.schema.withSchema('onboarding').createTable('custom_values', (t) => {
      t.uuid('user_id').notNullable();
      t.uuid('field_definition_id')
        .notNullable()
        .references('id')
        .inTable('onboarding.field_definitions');
      t.text('platform_key').notNullable();
      t.jsonb('value').notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['user_id', 'field_definition_id']);
      t.index(['user_id', 'platform_key']);
    });
    await knex.schema.withSchema('onboarding').createTable('memberships', (t) => {
      t.uuid('user_id').notNullable();
      t.text('platform_key').notNullable();
      t.text('status').notNullable();
      t.timestamp('completed_at', { useTz: true }).nullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.primary(['user_id', 'platform_key']);
      t.index(['platform_key', 'status']);
    });
    await knex.raw(
      `alter table onboarding.memberships add constraint memberships_status_check
       check (status in ('NOT_STARTED', 'IN_PROGRESS', 'COMPLETE'))`,
    );
  },
  async down(knex) {
    await knex.schema.withSchema('onboarding').dropTable('memberships');
    await knex.schema.withSchema('onboarding').dropTable('custom_values');
    await knex.schema.withSchema('onboarding').dropTable('global_field_definitions');
    await knex.schema.withSchema('onboarding').dropTable('schema_versions');
  },
};
