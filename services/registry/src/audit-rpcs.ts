import type { ServiceImpl } from '@connectrpc/connect';
import type { AuditKind, RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { appendAuditRecord, listAuditRecords, type AuditTargetType } from './audit-log.js';
import type { RegistryDeps } from './registry-deps.js';
import { auditRecordMessage, changeContextOf } from './registry-messages.js';

type Rpcs = ServiceImpl<typeof RegistryService>;

/** Audit kinds other services record through AppendAuditRecord. */
const externallyRecordedKinds: ReadonlySet<AuditKind> = new Set<AuditKind>([
  'user_role.bootstrapped',
  'user_role.granted',
  'user_role.revoked',
  'auth.sign_in_succeeded',
  'auth.sign_in_refused',
  'auth.logout',
  'auth.backchannel_logout',
  'session.revoked',
  'user_session.revoked',
  'admin.cookie_used',
  'platform.authentication_failed',
]);

/** Whether another service may record `kind`. */
const isExternallyRecorded = (kind: string): kind is AuditKind =>
  (externallyRecordedKinds as ReadonlySet<string>).has(kind);

const externalTargetTypes = new Set<string>([
  'platform',
  'user',
  'platform_client',
  'address',
  'identity_environment',
]);

/** The RPCs that page through the audit log and let other services add to it. */
export function auditRpcs(
  deps: RegistryDeps,
): Pick<Rpcs, 'listAuditRecords' | 'appendAuditRecord'> {
  return {
    listAuditRecords: listAuditRecordsRpc(deps),
    appendAuditRecord: appendAuditRecordRpc(deps),
  };
}

/** One page of the audit log: page 1 and 25 records unless asked, at most 100 a page. */
function listAuditRecordsRpc(deps: RegistryDeps): Rpcs['listAuditRecords'] {
  return async (request) => {
    const page = request.page > 0 ? request.page : 1;
    const pageSize = request.pageSize > 0 ? Math.min(request.pageSize, 100) : 25;
    const { items, total } = await listAuditRecords(deps.db.knex, {
      ...(request.kind === undefined ? {} : { kind: request.kind }),
      ...(request.targetKey === undefined ? {} : { targetKey: request.targetKey }),
      ...(request.actor === undefined ? {} : { actor: request.actor }),
      ...(request.platformKey === undefined ? {} : { platformKey: request.platformKey }),
      ...(request.createdFrom === undefined
        ? {}
        : { from: instantOf(request.createdFrom, 'createdFrom') }),
      ...(request.createdTo === undefined ? {} : { to: instantOf(request.createdTo, 'createdTo') }),
      page,
      pageSize,
    });
    return { items: items.map(auditRecordMessage), total, page, pageSize };
  };
}

/** An ISO 8601 instant of a request (the edge checked its form; this checks any caller). */
function instantOf(text: string, name: string): Date {
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) {
    throw new GatewayError('VALIDATION_ERROR', `${name} is not an ISO 8601 instant.`);
  }
  return at;
}

/** Records an event of another service; kinds the registry records itself are refused. */
function appendAuditRecordRpc(deps: RegistryDeps): Rpcs['appendAuditRecord'] {
  return async (request) => {
    if (!isExternallyRecorded(request.kind)) {
      throw new GatewayError(
        'VALIDATION_ERROR',
        `Audit kind ${request.kind} is recorded by the registry itself.`,
      );
    }
    // One insert, no transaction of its own: sign-ins and logouts record through here.
    await appendAuditRecord(deps.db.knex, {
      kind: request.kind,
      ...changeContextOf(request.context),
      target: {
        type: externalTargetTypes.has(request.targetType)
          ? (request.targetType as AuditTargetType)
          : 'platform',
        id: request.targetId,
        key: request.targetKey,
      },
      details: request.details ?? {},
    });
    return {};
  };
}
