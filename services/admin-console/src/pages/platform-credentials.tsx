import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { ProblemAlert } from '../ui/alerts.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { Checkbox } from '../ui/fields.js';
import { SecretPanel } from '../ui/secret-panel.js';

type Platform = Schemas['Platform'];
type Credential = Schemas['Credential'];
type Issued = Schemas['IssuedCredential'];

const when = (value: string | null) => (value === null ? '—' : new Date(value).toLocaleString());

/** Spec 4.10: the platform's keys, their grace periods, and every change to them. */
export function CredentialsSection(props: {
  platform: Platform;
  onChanged: (next: Platform, message: string) => void;
}) {
  const { platform } = props;
  const [issued, setIssued] = useState<Issued[]>([]);
  const pairLabel = (id: string | null) =>
    platform.redirectPairs.find((pair) => pair.id === id)?.label ?? 'a removed pair';
  const shown = (answer: Schemas['CredentialResponse'], message: string) => {
    setIssued(answer.credentials);
    props.onChanged(answer.platform, message);
  };
  const pairsWithoutKey = platform.redirectPairs.filter(
    (pair) => !platform.credentials.some((credential) => credential.redirectPairId === pair.id),
  );
  const hasBackend = platform.credentials.some((credential) => credential.kind === 'backend');
  const archived = platform.status === 'archived';
  return (
    <section aria-labelledby="credentials-title">
      <h2 id="credentials-title">Keys</h2>
      <SecretPanel credentials={issued} pairLabel={pairLabel} onDismiss={() => setIssued([])} />
      {platform.credentials.length === 0 ? (
        <p>No keys.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Keys of {platform.platformKey}</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Client id</th>
              <th scope="col">Pair</th>
              <th scope="col">Last used</th>
              <th scope="col">Rotated</th>
              <th scope="col">Previous secret valid until</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {platform.credentials.map((credential) => (
              <CredentialRow
                key={credential.id}
                platform={platform}
                credential={credential}
                pairLabel={pairLabel}
                onIssued={shown}
                onChanged={props.onChanged}
              />
            ))}
          </tbody>
        </table>
      )}
      {archived ? (
        <p>An archived platform has no keys; restore it first.</p>
      ) : (
        <IssueKeyButtons
          platformKey={platform.platformKey}
          pairsWithoutKey={pairsWithoutKey}
          hasBackend={hasBackend}
          onIssued={shown}
        />
      )}
    </section>
  );
}

/** Spec 4.10 issue: a BFF key for each pair without one, a backend key if there is none. */
function IssueKeyButtons(props: {
  platformKey: string;
  pairsWithoutKey: readonly Schemas['RedirectPair'][];
  hasBackend: boolean;
  onIssued: (answer: Schemas['CredentialResponse'], message: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<unknown>();
  const issue = async (body: Schemas['CreateCredentialRequest'], message: string) => {
    setBusy(true);
    setProblem(undefined);
    try {
      const answer = await unwrap(
        api.POST('/v1/platforms/{platformKey}/credentials', {
          params: { path: { platformKey: props.platformKey } },
          body,
        }),
      );
      props.onIssued(answer, message);
    } catch (error) {
      setProblem(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <div className="actions">
        {props.pairsWithoutKey.map((pair) => (
          <button
            key={pair.id}
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() =>
              void issue(
                { kind: 'bff', redirectPairId: pair.id },
                `A BFF key for ${pair.label} was issued.`,
              )
            }
          >
            Issue a BFF key for {pair.label}
          </button>
        ))}
        {props.hasBackend ? null : (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => void issue({ kind: 'backend' }, 'A backend key was issued.')}
          >
            Issue a backend key
          </button>
        )}
      </div>
      <ProblemAlert problem={problem} />
    </>
  );
}

function CredentialRow(props: {
  platform: Platform;
  credential: Credential;
  pairLabel: (id: string | null) => string;
  onIssued: (answer: Schemas['CredentialResponse'], message: string) => void;
  onChanged: (next: Platform, message: string) => void;
}) {
  const { platform, credential } = props;
  const [revokePrevious, setRevokePrevious] = useState(false);
  const [rotateClientId, setRotateClientId] = useState(false);
  const path = {
    params: { path: { platformKey: platform.platformKey, credentialId: credential.id } },
  };
  const name = `${credential.kind === 'bff' ? 'BFF key' : 'Backend key'} ${credential.clientId}`;
  const lastBff =
    credential.kind === 'bff' &&
    platform.status === 'active' &&
    platform.credentials.filter((item) => item.kind === 'bff').length === 1;
  const rotate = async () => {
    const answer = await unwrap(
      api.POST('/v1/platforms/{platformKey}/credentials/{credentialId}/rotate', {
        ...path,
        body: { revokePreviousImmediately: revokePrevious, rotateClientId },
      }),
    );
    props.onIssued(answer, `${name} was rotated.`);
  };
  const endGrace = async () => {
    await unwrap(
      api.DELETE('/v1/platforms/{platformKey}/credentials/{credentialId}/previous-secret', path),
    );
    const next = await unwrap(
      api.GET('/v1/platforms/{platformKey}', {
        params: { path: { platformKey: platform.platformKey } },
      }),
    );
    props.onChanged(next, `The previous secret of ${name} no longer works.`);
  };
  const remove = async () => {
    await unwrap(api.DELETE('/v1/platforms/{platformKey}/credentials/{credentialId}', path));
    const next = await unwrap(
      api.GET('/v1/platforms/{platformKey}', {
        params: { path: { platformKey: platform.platformKey } },
      }),
    );
    props.onChanged(next, `${name} was deleted.`);
  };
  return (
    <tr>
      <td>{credential.kind === 'bff' ? 'BFF' : 'Backend'}</td>
      <td>
        <code>{credential.clientId}</code>
      </td>
      <td>{credential.kind === 'bff' ? props.pairLabel(credential.redirectPairId) : 'all'}</td>
      <td>{when(credential.lastUsedAt)}</td>
      <td>{when(credential.rotatedAt)}</td>
      <td>{when(credential.previousSecretExpiresAt)}</td>
      <td className="actions">
        <ConfirmAction
          label="Rotate"
          accessibleName={`Rotate ${credential.clientId}`}
          title={`Rotate ${name}?`}
          confirmLabel="Rotate the key"
          consequences={[
            'A new secret is issued and shown once.',
            'Unless you choose otherwise below, the previous secret keeps working for 60 minutes, so the backend can switch without downtime.',
          ]}
          onConfirm={rotate}
        >
          <Checkbox
            id={`revoke-previous-${credential.id}`}
            label="Revoke the previous secret now"
            checked={revokePrevious}
            onChange={setRevokePrevious}
            hint="Backends still using it fail at once."
          />
          <Checkbox
            id={`rotate-client-${credential.id}`}
            label="Also issue a new client id"
            checked={rotateClientId}
            onChange={setRotateClientId}
            hint="The old client id and secret stop working at once."
          />
        </ConfirmAction>
        {credential.previousSecretExpiresAt === null ? null : (
          <ConfirmAction
            label="End grace period"
            accessibleName={`End the grace period of ${credential.clientId}`}
            title="End the grace period?"
            danger
            confirmLabel="Revoke the previous secret"
            onConfirm={endGrace}
            consequences={['The previous secret stops working now; only the new one is accepted.']}
          />
        )}
        <ConfirmAction
          label="Delete"
          accessibleName={`Delete ${credential.clientId}`}
          title={`Delete ${name}?`}
          danger
          confirmLabel="Delete the key"
          onConfirm={remove}
          consequences={[
            'The key stops working at once and cannot be restored.',
            lastBff
              ? 'It is the last BFF key of an active platform: the gateway refuses this (409). Issue another first or deactivate the platform.'
              : credential.kind === 'bff'
                ? `Sign-ins returning to ${props.pairLabel(credential.redirectPairId)} fail until its pair has a key again.`
                : 'Introspection with this key fails; BFF keys keep working.',
          ]}
        />
      </td>
    </tr>
  );
}
