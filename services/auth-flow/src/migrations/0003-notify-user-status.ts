import type { Migration } from '@gateway/db';

/** The channel on which every change of a user's status is announced (user-status-watch.ts). */
export const USER_STATUS_CHANNEL = 'authflow_user_status';

// The user-status watch keeps the ids of users who are not ACTIVE in memory, so an
// introspection needs no query. This trigger tells it of every change, with
// pg_notify('authflow_user_status', '{"id": ..., "status": ...}'): NOTIFY is delivered when
// the transaction commits, so listeners learn of exactly the committed changes, in commit
// order, whoever makes them (the gateway or SQL run by hand).
//
// - UPDATE OF status: only when the status really changes.
// - DELETE: status null (no such user any more), and a tombstone in `deleted_users`, so a
//   watch that reloads later still knows the id belongs to no live user (a session may still
//   name it). Nothing in the gateway deletes users; this is for deletes made by hand.
// - INSERT: only when the new row is not ACTIVE or reuses a tombstoned id; no watch holds
//   anything about a new id otherwise, so a first login notifies nothing (a notifying commit
//   takes the cluster-wide NOTIFY queue lock).
export const notifyUserStatus: Migration = {
  async up(knex) {
    await knex.schema.withSchema('authflow').createTable('deleted_users', (t) => {
      t.uuid('id').primary().comment('authflow.users.id of a deleted row (user-status watch)');
      t.timestamp('deleted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    // What a watch loads when it (re)connects: a few rows, not a scan of every user.
    await knex.raw(
      "create index users_not_active_idx on authflow.users (id) where status <> 'ACTIVE'",
    );
    await knex.raw(`
      create function authflow.notify_user_status() returns trigger
      language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          insert into authflow.deleted_users (id) values (old.id) on conflict (id) do nothing;
          perform pg_notify('${USER_STATUS_CHANNEL}',
            json_build_object('id', old.id, 'status', null)::text);
          return null;
        end if;
        if tg_op = 'INSERT' then
          delete from authflow.deleted_users where id = new.id;
          if not found and new.status = 'ACTIVE' then
            return null;
          end if;
        end if;
        perform pg_notify('${USER_STATUS_CHANNEL}',
          json_build_object('id', new.id, 'status', new.status)::text);
        return null;
      end
      $$`);
    await knex.raw(
      'create trigger users_status_inserted after insert on authflow.users for each row execute function authflow.notify_user_status()',
    );
    await knex.raw(
      'create trigger users_status_updated after update of status on authflow.users for each row when (old.status is distinct from new.status) execute function authflow.notify_user_status()',
    );
    await knex.raw(
      'create trigger users_status_deleted after delete on authflow.users for each row execute function authflow.notify_user_status()',
    );
  },
  async down(knex) {
    await knex.raw('drop trigger users_status_deleted on authflow.users');
    await knex.raw('drop trigger users_status_updated on authflow.users');
    await knex.raw('drop trigger users_status_inserted on authflow.users');
    await knex.raw('drop function authflow.notify_user_status()');
    await knex.raw('drop index authflow.users_not_active_idx');
    await knex.schema.withSchema('authflow').dropTable('deleted_users');
  },
};
