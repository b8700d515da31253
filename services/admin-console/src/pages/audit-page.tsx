import { useState } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { Loading, ProblemAlert } from '../ui/alerts.js';
import { Field } from '../ui/fields.js';
import { useLoad } from '../ui/use-load.js';
import { usePageTitle } from './page-title.js';

// The kind filter offers every kind the API's `kind` parameter accepts (generated from
// /openapi.json), so a new kind of audit record appears there without a change here.
import {
  pathsV1AuditRecordsGetParametersQueryKindValues as KINDS,
  type operations,
} from '../api/schema.js';

type Kind = NonNullable<NonNullable<operations['listAuditRecords']['parameters']['query']>['kind']>;
type AuditRecord = Schemas['AuditRecord'];

type Filters = {
  kind: string;
  target: string;
  actor: string;
  platform: string;
  from: string;
  until: string;
};

/** A `datetime-local` value (the browser's time zone) as the ISO 8601 instant it names. */
const instantOf = (local: string) => (local === '' ? undefined : new Date(local).toISOString());

/** One page of records; every filter is the gateway's (spec 2.15, GET /v1/audit-records). */
function listRecords(filters: Filters, page: number) {
  const given = (name: string, value: string | undefined) =>
    value === undefined || value.trim() === '' ? {} : { [name]: value.trim() };
  const query: NonNullable<operations['listAuditRecords']['parameters']['query']> = {
    page,
    pageSize: PAGE_SIZE,
    ...(filters.kind === '' ? {} : { kind: filters.kind as Kind }),
    ...given('targetKey', filters.target),
    ...given('actor', filters.actor),
    ...given('platform', filters.platform),
    ...given('from', instantOf(filters.from)),
    ...given('to', instantOf(filters.until)),
  };
  return unwrap(api.GET('/v1/audit-records', { params: { query } }));
}

const PAGE_SIZE = 100;

/**
 * Records of sign-ins, logouts and cookie use name their user by local id only. The console
 * looks the ids up among the users (most recent sign-in first, so the users of recent records
 * come early), a few pages at most; an id it does not find is shown as it is.
 */
const USER_PAGES_SEARCHED = 3;

async function emailsOfUsers(ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = new Set(ids);
  const found = new Map<string, string>();
  for (let page = 1; page <= USER_PAGES_SEARCHED && found.size < wanted.size; page += 1) {
    const users = await unwrap(
      api.GET('/v1/admin/users', { params: { query: { page, pageSize: PAGE_SIZE } } }),
    );
    for (const user of users.items) if (wanted.has(user.id)) found.set(user.id, user.email);
    if (page * PAGE_SIZE >= users.total) break;
  }
  return found;
}

/** The local user ids that actors of `records` are named by without an e-mail. */
function userIdsWithoutEmail(records: readonly AuditRecord[]): string[] {
  const ids = new Set<string>();
  for (const { actor } of records) {
    if (actor.kind === 'user' && actor.email === null && actor.subject !== null) {
      ids.add(actor.subject);
    }
  }
  return [...ids].sort();
}

/** Who acted: the e-mail when known (the id on hover), else the client id, subject or kind. */
function ActorName({ record, emails }: { record: AuditRecord; emails: Map<string, string> }) {
  const { actor } = record;
  const email = actor.email ?? (actor.subject === null ? undefined : emails.get(actor.subject));
  if (email !== undefined) {
    return <span title={actor.subject ?? undefined}>{email}</span>;
  }
  return <>{actor.clientId ?? actor.subject ?? actor.kind}</>;
}

/** The audit log, newest first, narrowed by the gateway to the filters' records. */
export function AuditPage({ initialTarget }: { initialTarget: string }) {
  usePageTitle('Audit log');
  const [filters, setFilters] = useState<Filters>({
    kind: '',
    target: initialTarget,
    actor: '',
    platform: '',
    from: '',
    until: '',
  });
  const [page, setPage] = useState(1);
  const platforms = useLoad(
    async () => (await unwrap(api.GET('/v1/platforms'))).items,
    'platforms',
  );
  const records = useLoad(() => listRecords(filters, page), `${JSON.stringify(filters)}|${page}`);
  const unnamed = userIdsWithoutEmail(records.data?.items ?? []);
  const emails = useLoad(
    async () => (unnamed.length === 0 ? new Map<string, string>() : emailsOfUsers(unnamed)),
    unnamed.join(','),
  );
  const emailOf = emails.data ?? new Map<string, string>();
  const set = (name: keyof Filters, value: string) => {
    setFilters((previous) => ({ ...previous, [name]: value }));
    setPage(1);
  };
  // A refused filter (400 VALIDATION_ERROR) is named beside its field.
  const invalid = records.problem instanceof ApiProblem ? records.problem.fieldErrors() : {};
  const pages = Math.max(1, Math.ceil((records.data?.total ?? 0) / PAGE_SIZE));
  return (
    <>
      <h1>Audit log</h1>
      <AuditFilters
        filters={filters}
        invalid={invalid}
        platformKeys={(platforms.data ?? []).map((platform) => platform.platformKey)}
        onChange={set}
      />
      <ProblemAlert problem={records.problem} />
      {records.data === undefined ? (
        records.loading ? (
          <Loading what="audit records" />
        ) : null
      ) : (
        <>
          <p role="status">{records.data.total} record(s).</p>
          <ol className="audit">
            {records.data.items.map((record) => (
              <li key={record.id}>
                <details>
                  <summary>
                    <time dateTime={record.createdAt}>
                      {new Date(record.createdAt).toLocaleString()}
                    </time>{' '}
                    <strong>{record.kind}</strong> {record.targetType}{' '}
                    <code>{record.targetKey}</code> by{' '}
                    <ActorName record={record} emails={emailOf} />
                  </summary>
                  <dl>
                    <dt>Actor</dt>
                    <dd>
                      {record.actor.kind}
                      {record.actor.subject !== null && emailOf.has(record.actor.subject)
                        ? ` ${emailOf.get(record.actor.subject) ?? ''}`
                        : ''}
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

function AuditFilters(props: {
  filters: Filters;
  invalid: Record<string, string>;
  platformKeys: readonly string[];
  onChange: (name: keyof Filters, value: string) => void;
}) {
  const { filters, invalid, onChange } = props;
  const text = (name: 'target' | 'actor', label: string, hint?: string) => (
    <Field
      id={`audit-${name}`}
      label={label}
      hint={hint}
      error={invalid[name === 'target' ? 'targetKey' : name]}
    >
      {(aria) => (
        <input
          {...aria}
          value={filters[name]}
          onChange={(event) => onChange(name, event.target.value)}
        />
      )}
    </Field>
  );
  const time = (name: 'from' | 'until', label: string) => (
    <Field id={`audit-${name}`} label={label} error={invalid[name === 'from' ? 'from' : 'to']}>
      {(aria) => (
        <input
          {...aria}
          type="datetime-local"
          value={filters[name]}
          onChange={(event) => onChange(name, event.target.value)}
        />
      )}
    </Field>
  );
  return (
    <div className="filters" role="search" aria-label="Filter audit records">
      <Field id="audit-kind" label="Kind" error={invalid.kind}>
        {(aria) => (
          <select
            {...aria}
            value={filters.kind}
            onChange={(event) => onChange('kind', event.target.value)}
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
      {text('target', 'Platform, environment or user e-mail')}
      {text('actor', 'Actor', "A user's e-mail or id, or a client id.")}
      <Field id="audit-platform" label="Platform" error={invalid.platform}>
        {(aria) => (
          <select
            {...aria}
            value={filters.platform}
            onChange={(event) => onChange('platform', event.target.value)}
          >
            <option value="">All platforms</option>
            {props.platformKeys.map((key) => (
              <option key={key} value={key}>
                {key}
              </option>
            ))}
          </select>
        )}
      </Field>
      {time('from', 'From')}
      {time('until', 'Until')}
    </div>
  );
}
