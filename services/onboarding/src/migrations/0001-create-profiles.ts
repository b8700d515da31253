import type { Migration } from '@gateway/db';

// Spec 2.5: the canonical profile of a local user (shared across platforms): the 13
// canonical keys, avatarUrl and metadata.
export const createProfiles: Migration = {
  async up(knex) {
    await knex.schema.withSchema('onboarding').createTable('profiles', (t) => {
      t.uuid('user_id').primary().comment('authflow.users.id (owned by the auth-flow service)');
      t.text('first_name').nullable();
      t.text('middle_name').nullable();
      t.text('last_name').nullable();
      t.text('nickname').nullable();
      t.text('phone_number').nullable();
      t.date('date_of_birth').nullable();
      t.text('gender').nullable();
      t.text('bio').nullable();
      t.text('nationality_country_code').nullable();
      t.text('secondary_nationality_country_code').nullable();
      t.text('residence_country_code').nullable();
      t.text('preferred_locale').nullable();
      t.text('timezone').nullable();
      t.text('avatar_url').nullable();
      t.jsonb('metadata').notNullable().defaultTo('{}');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
  },
  async down(knex) {
    await knex.schema.withSchema('onboarding').dropTable('profiles');
  },
};
