import type { Migration } from '@gateway/db';

// Spec 2.5, 2.6: local users keyed by (issuer, subject), and the one local role.
export const createUsersAndRoles: Migration = {
  async up(knex) {
    await knex.schema.withSchema('authflow').createTable('users', (t) => {
      t.uuid('id').primary();
      t.text('issuer').notNullable();
      t.text('subject').notNullable();
      t.text('environment_key').notNullable();
      t.text('email').notNullable().defaultTo('');
      t.boolean('email_verified').notNullable().defaultTo(false);
      t.text('status').notNullable().comment('ACTIVE, SOFT_DELETED or SUSPENDED');
      t.text('picture').nullable().comment('Last HTTPS picture claim');
      t.text('name').nullable().comment('Last name claim');
      t.timestamp('last_login_at', { useTz: true }).nullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.unique(['issuer', 'subject']);
      t.index(['environment_key']);
      t.index(['last_login_at']);
    });
    await knex.schema.withSchema('authflow').createTable('user_roles', (t) => {
      t.uuid('user_id')
        .notNullable()
        .references('id')
        .inTable('authflow.users')
        .onDelete('CASCADE');
      t.text('role').notNullable().comment('platform_admin');
      t.text('granted_by').notNullable().comment('bootstrap or an admin actor');
      t.timestamp('granted_at', { useTz: true }).notNullable();
      t.primary(['user_id', 'role']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('authflow').dropTable('user_roles');
    await knex.schema.withSchema('authflow').dropTable('users');
  },
};
