import type { Migration } from '@gateway/db';

// Spec 4.8 avatar upload (the upload shape is ours, docs/decisions.md): there is no object
// store, so the gateway is the upload target.
// - avatar_uploads: a reserved upload, single use, bound to its user, valid 10 minutes.
// - avatars: the stored images, served publicly by id; a user keeps one (replacing deletes
//   the previous one).
export const createAvatars: Migration = {
  async up(knex) {
    await knex.schema.withSchema('onboarding').createTable('avatar_uploads', (t) => {
      t.uuid('id').primary().comment('The uploadId of the upload URL (random)');
      t.uuid('user_id').notNullable().comment('authflow.users.id: only this user may upload');
      t.text('content_type').notNullable().comment('image/png, image/jpeg or image/webp');
      t.integer('content_length').notNullable().comment('Declared size in bytes');
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('used_at', { useTz: true }).nullable().comment('Set once, when stored');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['user_id']);
    });
    await knex.schema.withSchema('onboarding').createTable('avatars', (t) => {
      t.uuid('id').primary().comment('The avatarId of the public URL (random)');
      t.uuid('user_id').notNullable().comment('authflow.users.id');
      t.text('content_type').notNullable().comment('Sniffed from the magic bytes');
      t.binary('data').notNullable();
      t.integer('size').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.index(['user_id']);
    });
  },
  async down(knex) {
    await knex.schema.withSchema('onboarding').dropTable('avatars');
    await knex.schema.withSchema('onboarding').dropTable('avatar_uploads');
  },
};
