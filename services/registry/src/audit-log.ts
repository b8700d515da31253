import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Knex } from 'knex';
import type { AuditKind } from '@gateway/contracts';
import { queryRows, toCount } from '@gateway/db';

/** Who made a change (spec 2.15: audit record shape is the gateway's choice). */
export type AuditActor = {
  kind: 'machine' | 'user' | 'system';
  subject: string;
  clientId: string;
  environmentKey: string;
  email: string;
};

/**
 * What a record is about. `platform_client` and `address` name the presenter of refused
 * platform credentials (a client id, or the source address when no id was readable).
 */
export type AuditTargetType =
  'platform' | 'identity_environment' | 'user' | 'platform_client' | 'address';

export type AuditEntry = {
  kind: AuditKind;
  actor: AuditActor;
  requestId: string;
  target: { type: AuditTargetType; id: string; key: string };
  details?: JsonObject;
};

export type AuditRecordRow = {
  id: string;
  kind: string;
  actor: AuditActor;
  target_type: string;
  target_id: string;
  target_key: string;
  details: JsonObject;
  request_id: string;
  created_at: Date;
};

const table = 'registry.audit_records';

const INSERT_AUDIT_RECORD = `insert into ${table}
  (id, kind, actor, target_type, target_id, target_key, details, request_id, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Appends an audit record. Called with the transaction of the change it records, so a change
 * and its record commit or roll back together; an event of another service (a sign-in, a
 * logout) is one insert on its own, which every sign-in writes: one statement straight to
 * node-postgres (queryRows, no query builder). Records are never updated. Details hold identifiers and
 * outcomes only, never secrets.
 */
export async function appendAuditRecord(
  trx: Knex | Knex.Transaction,
  entry: AuditEntry,
): Promise<void> {
  await queryRows(trx, INSERT_AUDIT_RECORD, [
    randomUUID(),
    entry.kind,
    JSON.stringify(entry.actor),
    entry.target.type,
    entry.target.id,
    entry.target.key,
    JSON.stringify(entry.details ?? {}),
    entry.requestId,
    new Date(),
  ]);
}

/** What a page of the audit log is narrowed to; every filter given must match. */
export type AuditQuery = {
  kind?: string;
  targetKey?: string;
  /** The actor's subject, e-mail (any case) or client id, as the record stores it. */
  actor?: string;
  /** Records whose target is this platform. */
  platformKey?: string;
  /** Created at or after. */
  from?: Date;
  /** Created at or before. */
  to?: Date;
  page: number;
  pageSize: number;
};

/**
 * One page of matching records, newest first, and how many match. Each filter has an index
 * (migrations 0001 and 0004): the actor's subject, lower-case e-mail and client id, the
 * target key, and the creation time.
 */
export async function listAuditRecords(
  knex: Knex,
  query: AuditQuery,
): Promise<{ items: AuditRecordRow[]; total: number }> {
  const [countRow] = await matchingAuditRecords(knex, query).count({ count: '*' });
  const items = (await matchingAuditRecords(knex, query)
    .select('*')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize)) as AuditRecordRow[];
  return { items, total: toCount(countRow?.count) };
}

/** The records that match every filter of `query` (not yet ordered or paged). */
export function matchingAuditRecords(knex: Knex, query: Omit<AuditQuery, 'page' | 'pageSize'>) {
  const builder = knex(table);
  if (query.kind !== undefined) builder.where('kind', query.kind);
  if (query.targetKey !== undefined) builder.where('target_key', query.targetKey);
  if (query.actor !== undefined) whereActor(builder, query.actor);
  if (query.platformKey !== undefined) {
    builder.where({ target_type: 'platform', target_key: query.platformKey });
  }
  if (query.from !== undefined) builder.where('created_at', '>=', query.from);
  if (query.to !== undefined) builder.where('created_at', '<=', query.to);
  return builder;
}

/** The expressions of the actor indexes (0004-audit-filter-indexes.ts), written the same. */
function whereActor(builder: Knex.QueryBuilder, actor: string): void {
  builder.where((either) =>
    either
      .whereRaw("(actor->>'subject') = ?", [actor])
      .orWhereRaw("lower(actor->>'email') = lower(?)", [actor])
      .orWhereRaw("(actor->>'clientId') = ?", [actor]),
  );
}
