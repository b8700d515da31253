import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { Loading, Notice, ProblemAlert } from '../ui/alerts.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { useLoad } from '../ui/use-load.js';

type User = Schemas['AdminUser'];
type Session = Schemas['UserSession'];

const when = (value: string) => new Date(value).toLocaleString();
/** A session's short name in labels: the first block of its uuid. */
const shortId = (session: Session) => session.id.slice(0, 8);

/**
 * A user's live gateway sessions (`GET /v1/admin/users/{userId}/sessions`), each with "End",
 * and "End all sessions" (`POST /v1/admin/users/{userId}/sessions/revoke`, spec 4.12).
 */
export function UserSessions({ user, id }: { user: User; id: string }) {
  const path = { params: { path: { userId: user.id } } };
  const sessions = useLoad(
    async () => unwrap(api.GET('/v1/admin/users/{userId}/sessions', path)),
    user.id,
  );
  const [notice, setNotice] = useState<string>();
  const done = (message: string) => {
    setNotice(message);
    sessions.reload();
  };
  const items = sessions.data?.items;
  return (
    <section id={id} className="user-sessions" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Live sessions of {user.email}</h2>
      <Notice>{notice}</Notice>
      <ProblemAlert problem={sessions.problem} />
      {items === undefined ? (
        sessions.loading ? (
          <Loading what="sessions" />
        ) : null
      ) : items.length === 0 ? (
        <p role="status">No live sessions.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Live sessions of {user.email}</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Platform</th>
              <th scope="col">Environment</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((session) => (
              <SessionRow key={session.id} user={user} session={session} onDone={done} />
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        <ConfirmAction
          label="End all sessions"
          accessibleName={`End all sessions of ${user.email}`}
          title={`End every session of ${user.email}?`}
          danger
          confirmLabel="End the sessions"
          consequences={[
            'Every gateway session of the user ends now, on every platform.',
            "Then the identity service ends the user's identity sessions, so the next sign-in asks for the password.",
          ]}
          onConfirm={async () => {
            const result = await unwrap(api.POST('/v1/admin/users/{userId}/sessions/revoke', path));
            done(
              `Ended ${result.revokedGatewaySessions} gateway session(s) of ${user.email}; identity sessions ${result.identitySessionsRevoked ? 'revoked' : 'not revoked (the identity service has no such user)'}.`,
            );
          }}
        />
      </div>
    </section>
  );
}

function SessionRow({
  user,
  session,
  onDone,
}: {
  user: User;
  session: Session;
  onDone: (message: string) => void;
}) {
  const name = `session ${shortId(session)} of ${user.email}`;
  const platform = session.platform === null ? '—' : session.platform.name;
  return (
    <tr>
      <th scope="row">
        <code title={session.id}>{shortId(session)}</code>
      </th>
      <td>{session.platform === null ? '—' : `${platform} (${session.platform.key})`}</td>
      <td>
        {session.environment.key} · {session.environment.tier}
      </td>
      <td>{when(session.createdAt)}</td>
      <td>{when(session.expiresAt)}</td>
      <td className="actions">
        <ConfirmAction
          label="End"
          accessibleName={`End ${name}`}
          title={`End ${name}?`}
          danger
          confirmLabel="End the session"
          consequences={[
            `This gateway session ends now${session.platform === null ? '' : ` (signed in on ${platform})`}; the user's other sessions stay.`,
            'A platform notices at its next introspection: within a minute at most, as it may keep an answer that long.',
          ]}
          onConfirm={async () => {
            await unwrap(
              api.DELETE('/v1/admin/users/{userId}/sessions/{sessionId}', {
                params: { path: { userId: user.id, sessionId: session.id } },
              }),
            );
            onDone(`The ${name} ended.`);
          }}
        />
      </td>
    </tr>
  );
}
