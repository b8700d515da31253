import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { Loading, ProblemAlert } from '../ui/alerts.js';
import { Field } from '../ui/fields.js';
import { useLoad } from '../ui/use-load.js';
import { usePageTitle } from './page-title.js';

import type { operations } from '../api/schema.js';

type Kind = NonNullable<NonNullable<operations['listAuditRecords']['parameters']['query']>['kind']>;
type AuditRecord = Schemas['AuditRecord'];

const KINDS = [
  'user_role.bootstrapped',
  'user_role.granted',
  'user_role.revoked',
  'identity_environment.created',
  'identity_environment.updated',
  'identity_environment.deactivated',
  'identity_environment.activated',
  'platform.created',
  'platform.updated',
  'platform.environment_changed',
  'platform.deactivated',
  'platform.activated',
  'platform.archived',
  'platform.restored',
  'platform.credential_created',
  'platform.credential_rotated',
  'platform.credential_previous_secret_revoked',
  'platform.credential_revoked',
  'platform.authentication_failed',
  'auth.sign_in_succeeded',
  'auth.sign_in_refused',
  'auth.logout',
  'session.revoked',
  'admin.cookie_used',
] as const satisfies readonly Kind[];

function listRecords(query: {
  kind?: (typeof KINDS)[number];
  targetKey?: string;
  page: number;
  pageSize: number;
}) {
  return unwrap(api.GET('/v1/audit-records', { params: { query } }));
}

const actorOf = (record: AuditRecord) =>
  record.actor.email ?? record.actor.clientId ?? record.actor.subject ?? record.actor.kind;

/**
 * The audit log, newest first. Kind and target (a platform or environment key, or a user's
 * e-mail) are filtered by the gateway; actor and time narrow the page shown.
 */
export function AuditPage({ initialTarget }: { initialTarget: string }) {
  usePageTitle('Audit log');
  const [kind, setKind] = useState('');
  const [target, setTarget] = useState(initialTarget);
  const [actor, setActor] = useState('');
  const [from, setFrom] = useState('');
  const [until, setUntil] = useState('');
  const [page, setPage] = useState(1);
  const records = useLoad(
    () =>
      listRecords({
        page,
        pageSize: 100,
        ...(kind === '' ? {} : { kind: kind as (typeof KINDS)[number] }),
        ...(target.trim() === '' ? {} : { targetKey: target.trim() }),
      }),
    `${kind}|${target}|${page}`,
  );
  const shown = (records.data?.items ?? []).filter((record) => {
    if (actor.trim() !== '' && !actorOf(record).toLowerCase().includes(actor.trim().toLowerCase()))
      return false;
    if (from !== '' && record.createdAt < new Date(from).toISOString()) return false;
    if (until !== '' && record.createdAt > new Date(until).toISOString()) return false;
    return true;
  });
  const pages = Math.max(1, Math.ceil((records.data?.total ?? 0) / 100));
  return (
    <>
      <h1>Audit log</h1>
      <div className="filters" role="search" aria-label="Filter audit records">
        <Field id="audit-kind" label="Kind">
          {(aria) => (
            <select
              {...aria}
              value={kind}
              onChange={(event) => {
                setKind(event.target.value);
                setPage(1);
              }}
            >
              <option value="">All kinds</option>
              {KINDS.map((item) => (
                <option key={item} value={item}>
                  {item}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id="audit-target" label="Platform, environment or user e-mail">
          {(aria) => (
            <input
              {...aria}
              value={target}
              onChange={(event) => {
                setTarget(event.target.value);
                setPage(1);
              }}
            />
          )}
        </Field>
        <Field id="audit-actor" label="Actor contains" hint="Within this page.">
          {(aria) => (
            <input {...aria} value={actor} onChange={(event) => setActor(event.target.value)} />
          )}
        </Field>
        <Field id="audit-from" label="From">
          {(aria) => (
            <input
              {...aria}
              type="datetime-local"
              value={from}
              onChange={(event) => setFrom(event.target.value)}
            />
          )}
        </Field>
        <Field id="audit-until" label="Until">
          {(aria) => (
            <input
              {...aria}
              type="datetime-local"
              value={until}
              onChange={(event) => setUntil(event.target.value)}
            />
          )}
        </Field>
      </div>
      <ProblemAlert problem={records.problem} />
      {records.data === undefined ? (
        records.loading ? (
          <Loading what="audit records" />
        ) : null
      ) : (
        <>
          <p role="status">
            {shown.length} of {records.data.total} record(s).
          </p>
          <ol className="audit">
            {shown.map((record) => (
              <li key={record.id}>
                <details>
                  <summary>
                    <time dateTime={record.createdAt}>
                      {new Date(record.createdAt).toLocaleString()}
                    </time>{' '}
                    <strong>{record.kind}</strong> {record.targetType}{' '}
                    <code>{record.targetKey}</code> by {actorOf(record)}
                  </summary>
                  <dl>
                    <dt>Actor</dt>
                    <dd>
                      {record.actor.kind}
                      {record.actor.environmentKey === null
                        ? ''
                        : ` in ${record.actor.environmentKey}`}
                      {record.actor.subject === null ? '' : ` (subject ${record.actor.subject})`}
                    </dd>
                    <dt>Target</dt>
                    <dd>
                      {record.targetType} {record.targetKey} ({record.targetId})
                    </dd>
                    <dt>Request</dt>
                    <dd>{record.requestId ?? '—'}</dd>
                    <dt>Details</dt>
                    <dd>
                      <pre>{JSON.stringify(record.details, null, 2)}</pre>
                    </dd>
                  </dl>
                </details>
              </li>
            ))}
          </ol>
          <nav className="pager" aria-label="Pages of audit records">
            <button
              type="button"
              className="secondary"
              disabled={page <= 1}
              onClick={() => setPage(page - 1)}
            >
              Newer
            </button>
            <span>
              Page {page} of {pages}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={page >= pages}
              onClick={() => setPage(page + 1)}
            >
              Older
            </button>
          </nav>
        </>
      )}
    </>
  );
}
