import type { Migration } from '@gateway/db';

// Spec 2.10, 3.6: a platform's onboarding field definitions. The properties validated by
// @gateway/field-rules (label, fieldType, source, options, validation, ...) are stored as one
// jsonb `definition`; `field_key` is immutable and unique per platform; `active` false is
// ARCHIVED (values kept).
export const createFieldDefinitions: Migration = {
  async up(knex) {
    await knex.schema.withSchema('onboarding').createTable('field_definitions', (t) => {
      t.uuid('id').primary();
      t.text('platform_key').notNullable().comment('registry.platforms.platform_key');
      t.text('field_key').notNullable();
      t.jsonb('definition').notNullable();
      t.boolean('active').notNullable().defaultTo(true);
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.unique(['platform_key', 'field_key']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('onboarding').dropTable('field_definitions');
  },
};
