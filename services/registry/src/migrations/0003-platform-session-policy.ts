import type { Migration } from '@gateway/db';

// A platform whose logins' sessions may act as admin credentials (`admin_console`, default
// false), and the instant before which its sessions are ended (`sessions_not_before`, set when
// the platform is deactivated or archived). See docs/decisions.md.
export const addPlatformSessionPolicy: Migration = {
  async up(knex) {
    await knex.schema.withSchema('registry').alterTable('platforms', (t) => {
      t.boolean('admin_console').notNullable().defaultTo(false);
      t.timestamp('sessions_not_before', { useTz: true }).nullable();
    });
  },
  async down(knex) {
    await knex.schema.withSchema('registry').alterTable('platforms', (t) => {
      t.dropColumn('sessions_not_before');
      t.dropColumn('admin_console');
    });
  },
};
