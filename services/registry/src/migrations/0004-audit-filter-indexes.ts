import type { Migration } from '@gateway/db';

// The audit log's actor filter (GET /v1/audit-records?actor=): one index per way a record
// names its actor, each with the creation time for the newest-first page. The expressions
// are written exactly as audit-log.ts queries them, so the planner can use them. The
// platform filter uses audit_records_target_key_created_at_index (0001) and the time span
// audit_records_created_at_index (0001).
export const addAuditFilterIndexes: Migration = {
  async up(knex) {
    await knex.raw(
      "create index audit_records_actor_subject_index on registry.audit_records ((actor->>'subject'), created_at)",
    );
    await knex.raw(
      "create index audit_records_actor_email_index on registry.audit_records ((lower(actor->>'email')), created_at)",
    );
    await knex.raw(
      "create index audit_records_actor_client_id_index on registry.audit_records ((actor->>'clientId'), created_at)",
    );
  },
  async down(knex) {
    await knex.raw('drop index registry.audit_records_actor_client_id_index');
    await knex.raw('drop index registry.audit_records_actor_email_index');
    await knex.raw('drop index registry.audit_records_actor_subject_index');
  },
};
