import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { Loading, Notice, ProblemAlert } from '../ui/alerts.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { Field } from '../ui/fields.js';
import { useLoad } from '../ui/use-load.js';
import { usePageTitle } from './page-title.js';
import { useEnvironments } from './platforms-page.js';
import { UserSessions } from './user-sessions.js';

const PAGE_SIZE = 25;
/** The users table's columns, which a row's sessions span. */
const COLUMNS = 6;
type User = Schemas['AdminUser'];

export function UsersPage({ selfId }: { selfId: string }) {
  usePageTitle('Users');
  const environments = useEnvironments();
  const [search, setSearch] = useState('');
  const [environment, setEnvironment] = useState('');
  const [page, setPage] = useState(1);
  const [notice, setNotice] = useState<string>();
  const users = useLoad(
    async () =>
      unwrap(
        api.GET('/v1/admin/users', {
          params: {
            query: {
              page,
              pageSize: PAGE_SIZE,
              ...(search.trim() === '' ? {} : { search: search.trim() }),
              ...(environment === '' ? {} : { environmentKey: environment }),
            },
          },
        }),
      ),
    `${search}|${environment}|${page}`,
  );
  const pages = Math.max(1, Math.ceil((users.data?.total ?? 0) / PAGE_SIZE));
  const done = (message: string) => {
    setNotice(message);
    users.reload();
  };
  return (
    <>
      <h1>Users</h1>
      <div className="filters" role="search" aria-label="Find users">
        <Field id="user-search" label="E-mail contains">
          {(aria) => (
            <input
              {...aria}
              type="search"
              value={search}
              onChange={(event) => {
                setSearch(event.target.value);
                setPage(1);
              }}
            />
          )}
        </Field>
        <Field id="user-environment" label="Identity environment">
          {(aria) => (
            <select
              {...aria}
              value={environment}
              onChange={(event) => {
                setEnvironment(event.target.value);
                setPage(1);
              }}
            >
              <option value="">All environments</option>
              {(environments.data ?? []).map((item) => (
                <option key={item.environmentKey} value={item.environmentKey}>
                  {item.environmentKey}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Notice>{notice}</Notice>
      <ProblemAlert problem={environments.problem ?? users.problem} />
      {users.data === undefined ? (
        users.loading ? (
          <Loading what="users" />
        ) : null
      ) : (
        <>
          <p role="status">{users.data.total} user(s), newest sign-in first.</p>
          <table>
            <caption className="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Environment</th>
                <th scope="col">Status</th>
                <th scope="col">Roles</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.data.items.map((user) => (
                <UserRow key={user.id} user={user} self={user.id === selfId} onDone={done} />
              ))}
            </tbody>
          </table>
          <nav className="pager" aria-label="Pages of users">
            <button
              type="button"
              className="secondary"
              disabled={page <= 1}
              onClick={() => setPage(page - 1)}
            >
              Previous page
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
              Next page
            </button>
          </nav>
        </>
      )}
    </>
  );
}

function UserRow({
  user,
  self,
  onDone,
}: {
  user: User;
  self: boolean;
  onDone: (message: string) => void;
}) {
  const path = { params: { path: { userId: user.id } } };
  const admin = user.roles.includes('platform_admin');
  const [showSessions, setShowSessions] = useState(false);
  const sessionsId = `sessions-${user.id}`;
  const row = (
    <tr>
      <th scope="row">
        {user.email}
        {self ? ' (you)' : ''}
        {user.emailVerified ? '' : ' · not verified'}
      </th>
      <td>{user.environmentKey}</td>
      <td>{user.status}</td>
      <td>{admin ? 'platform_admin' : '—'}</td>
      <td>{user.lastLoginAt === null ? '—' : new Date(user.lastLoginAt).toLocaleString()}</td>
      <td className="actions">
        {admin ? (
          <ConfirmAction
            label="Revoke admin"
            accessibleName={`Revoke admin from ${user.email}`}
            title={`Revoke platform_admin from ${user.email}?`}
            danger
            confirmLabel="Revoke the role"
            consequences={[
              "Admin permissions are stripped from the user's sessions at once.",
              'The gateway refuses to remove the last platform admin (409).',
              ...(self ? ['This is you: the console stops working for you right away.'] : []),
            ]}
            onConfirm={async () => {
              await unwrap(api.DELETE('/v1/admin/users/{userId}/roles/platform_admin', path));
              onDone(`${user.email} is no longer a platform admin.`);
            }}
          />
        ) : (
          <ConfirmAction
            label="Grant admin"
            accessibleName={`Grant admin to ${user.email}`}
            title={`Grant platform_admin to ${user.email}?`}
            confirmLabel="Grant the role"
            consequences={[
              'The user can manage every platform, key, environment, user and onboarding field.',
              "It takes effect at the user's next sign-in; existing sessions are unchanged.",
              ...(user.deploymentEnvironment
                ? []
                : [
                    'This user is not in the deployment environment: the gateway refuses the role (409).',
                  ]),
            ]}
            onConfirm={async () => {
              await unwrap(api.PUT('/v1/admin/users/{userId}/roles/platform_admin', path));
              onDone(`${user.email} is now a platform admin (from the next sign-in).`);
            }}
          />
        )}
        <button
          type="button"
          className="secondary"
          aria-expanded={showSessions}
          aria-controls={showSessions ? sessionsId : undefined}
          aria-label={`Sessions of ${user.email}`}
          title={`Sessions of ${user.email}`}
          onClick={() => setShowSessions(!showSessions)}
        >
          Sessions
        </button>
      </td>
    </tr>
  );
  return (
    <>
      {row}
      {showSessions ? (
        <tr className="details">
          <td colSpan={COLUMNS}>
            <UserSessions user={user} id={sessionsId} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
