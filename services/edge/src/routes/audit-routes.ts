import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, json } from './openapi-responses.js';
import { toAuditRecordJson } from './registry-mappers.js';
import { AuditRecordListJson, ListAuditRecordsQuery } from './registry-schemas.js';

/** Audit records of registry and role changes (spec 2.15) and security events, newest first. */
const listAuditRecords = defineOperation({
  auth: { kind: 'admin', permission: 'platforms:admin' },
  response: { kind: 'json', status: 200 },
  operationId: 'listAuditRecords',
  method: 'get',
  path: '/v1/audit-records',
  summary: 'List audit records, newest first.',
  description:
    "Filter by `kind` and `targetKey`: a platform or environment key, a user's e-mail, or " +
    'for `platform.authentication_failed` the presented client id or the source address; ' +
    'by `actor`, `platform` and the time span `from`-`to`. Filters combine; the total counts ' +
    'the matching records.',
  tags: ['Audit'],
  query: ListAuditRecordsQuery,
  responses: {
    200: json('A page of audit records.', AuditRecordListJson),
    ...adminErrorResponses(),
  },
  handler: async ({ query, services }) => {
    const answer = await services.clients.registry.listAuditRecords({
      kind: query.kind,
      targetKey: query.targetKey,
      actor: query.actor,
      platformKey: query.platform,
      createdFrom: query.from,
      createdTo: query.to,
      page: query.page,
      pageSize: query.pageSize,
    });
    return {
      items: answer.items.map(toAuditRecordJson),
      total: answer.total,
      page: answer.page,
      pageSize: answer.pageSize,
    };
  },
});

export const auditOperations: readonly AnyOperation[] = [listAuditRecords];
