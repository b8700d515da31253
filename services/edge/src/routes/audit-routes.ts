import type { Router } from 'express';
import type { OperationCatalog } from '../http/operation-catalog.js';
import {
  adminErrorResponses,
  defineAdminOperation,
  json,
  sendJson,
  type RegistryRouteOptions,
} from './admin-operation.js';
import { toAuditRecordJson } from './registry-mappers.js';
import { AuditRecordListJson, ListAuditRecordsQuery } from './registry-schemas.js';

/** Audit records of registry and role changes (spec 2.15), newest first. */
export function registerAuditRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: Pick<RegistryRouteOptions, 'clients' | 'authentication'>,
): void {
  defineAdminOperation(
    router,
    catalog,
    { authentication: options.authentication, permission: 'platforms:admin' },
    {
      operationId: 'listAuditRecords',
      method: 'get',
      path: '/v1/audit-records',
      summary: 'List audit records, newest first.',
      description: 'Filter by `kind` and `targetKey` (a platform or environment key).',
      tags: ['Audit'],
      query: ListAuditRecordsQuery,
      responses: {
        200: json('A page of audit records.', AuditRecordListJson),
        ...adminErrorResponses(),
      },
      handler: async ({ query }, _req, res) => {
        const answer = await options.clients.registry.listAuditRecords({
          kind: query.kind,
          targetKey: query.targetKey,
          page: query.page,
          pageSize: query.pageSize,
        });
        sendJson(res, 200, {
          items: answer.items.map(toAuditRecordJson),
          total: answer.total,
          page: answer.page,
          pageSize: answer.pageSize,
        });
      },
    },
  );
}
