import type { Migration } from '@gateway/db';

// Spec 2.1-2.4: identity environments, platforms, redirect pairs, platform credentials,
// and the append-only audit log (2.15).
export const createRegistryTables: Migration = {
  // Over 80 lines on purpose: an applied migration is frozen history, so its steps stay as run.
  async up(knex) {
    await knex.schema.withSchema('registry').createTable('identity_environments', (t) => {
      t.uuid('id').primary();
      t.text('environment_key').notNullable().unique();
      t.text('display_name').notNullable();
      t.text('tier').notNullable().comment('development, staging or production');
      t.text('source')
        .notNullable()
        .comment('deployment (the PROD row, from configuration) or database');
      t.boolean('active').notNullable().defaultTo(true);
      t.text('issuer').notNullable().unique();
      t.text('oidc_client_id').notNullable();
      t.text('oidc_client_secret_encrypted')
        .nullable()
        .comment('AES-256-GCM under IDENTITY_ENVIRONMENT_SECRET_KEY; never returned');
      t.text('post_logout_redirect_uri').nullable();
      t.jsonb('metadata').notNullable().defaultTo('{}');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await knex.schema.withSchema('registry').createTable('platforms', (t) => {
      t.uuid('id').primary();
      t.text('platform_key').notNullable().unique().comment('Stays reserved after archive');
      t.text('display_name').notNullable();
      t.text('status').notNullable().comment('active, inactive or archived (spec 3.4)');
      t.integer('requirement_version').notNullable().defaultTo(0);
      t.boolean('central_onboarding_enabled').notNullable().defaultTo(false);
      t.text('platform_onboarding_path').nullable();
      t.text('default_onboarding_mode').notNullable();
      t.uuid('identity_environment_id')
        .notNullable()
        .references('id')
        .inTable('registry.identity_environments');
      t.jsonb('metadata').notNullable().defaultTo('{}');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('updated_at', { useTz: true }).notNullable();
      t.index(['identity_environment_id']);
    });
    await knex.schema.withSchema('registry').createTable('redirect_pairs', (t) => {
      t.uuid('id').primary();
      t.uuid('platform_id')
        .notNullable()
        .references('id')
        .inTable('registry.platforms')
        .onDelete('CASCADE');
      t.integer('position').notNullable();
      t.text('label').notNullable();
      t.text('return_url').notNullable();
      t.text('callback_url').notNullable();
      t.boolean('is_default').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.unique(['platform_id', 'return_url']);
    });
    await knex.schema.withSchema('registry').createTable('platform_credentials', (t) => {
      t.uuid('id').primary();
      t.uuid('platform_id')
        .notNullable()
        .references('id')
        .inTable('registry.platforms')
        .onDelete('CASCADE');
      t.text('kind').notNullable().comment('bff or backend');
      t.uuid('redirect_pair_id').nullable().references('id').inTable('registry.redirect_pairs');
      t.text('client_id').notNullable().unique();
      t.text('secret_hash').notNullable().comment('SHA-256 of a 256-bit random secret, base64url');
      t.text('previous_secret_hash').nullable();
      t.timestamp('previous_secret_expires_at', { useTz: true }).nullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('rotated_at', { useTz: true }).nullable();
      t.timestamp('last_used_at', { useTz: true }).nullable();
      t.index(['platform_id']);
    });
    await knex.raw(
      "create unique index platform_credentials_one_backend on registry.platform_credentials (platform_id) where kind = 'backend'",
    );
    await knex.raw(
      'create unique index platform_credentials_one_bff_per_pair on registry.platform_credentials (redirect_pair_id) where redirect_pair_id is not null',
    );
    await knex.schema.withSchema('registry').createTable('audit_records', (t) => {
      t.uuid('id').primary();
      t.text('kind').notNullable();
      t.jsonb('actor').notNullable().comment('{ kind, subject, clientId, environmentKey, email }');
      t.text('target_type').notNullable();
      t.text('target_id').notNullable();
      t.text('target_key').notNullable();
      t.jsonb('details').notNullable().defaultTo('{}');
      t.text('request_id').notNullable().defaultTo('');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['created_at']);
      t.index(['target_key', 'created_at']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('registry').dropTable('audit_records');
    await knex.schema.withSchema('registry').dropTable('platform_credentials');
    await knex.schema.withSchema('registry').dropTable('redirect_pairs');
    await knex.schema.withSchema('registry').dropTable('platforms');
    await knex.schema.withSchema('registry').dropTable('identity_environments');
  },
};
