import { useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { Link, navigate } from '../app/router.js';
import { Loading, Notice, ProblemAlert } from '../ui/alerts.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { Field } from '../ui/fields.js';
import { useLoad } from '../ui/use-load.js';
import { usePageTitle } from './page-title.js';
import { useEnvironments } from './platforms-page.js';

type Tier = 'development' | 'staging' | 'production';
type Environment = Schemas['IdentityEnvironment'];

export function EnvironmentsPage() {
  usePageTitle('Identity environments');
  const environments = useEnvironments();
  const [tier, setTier] = useState('');
  const shown = (environments.data ?? []).filter((item) => tier === '' || item.tier === tier);
  return (
    <>
      <h1>Identity environments</h1>
      <div className="filters" role="search" aria-label="Filter environments">
        <Field id="filter-tier" label="Tier">
          {(aria) => (
            <select {...aria} value={tier} onChange={(event) => setTier(event.target.value)}>
              <option value="">All tiers</option>
              <option value="production">production</option>
              <option value="staging">staging</option>
              <option value="development">development</option>
            </select>
          )}
        </Field>
      </div>
      <ProblemAlert problem={environments.problem} />
      {environments.data === undefined ? (
        <Loading what="identity environments" />
      ) : (
        <table>
          <caption className="visually-hidden">Identity environments</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Tier</th>
              <th scope="col">Source</th>
              <th scope="col">Status</th>
              <th scope="col">Issuer</th>
              <th scope="col">Client secret</th>
              <th scope="col">Platforms</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((item) => (
              <tr key={item.id}>
                <th scope="row">
                  <Link to={`/environments/${encodeURIComponent(item.environmentKey)}`}>
                    {item.environmentKey}
                  </Link>
                </th>
                <td>{item.displayName}</td>
                <td>{item.tier}</td>
                <td>
                  {item.source}
                  {item.grantsGatewayPermissions ? ' (grants admin roles)' : ''}
                </td>
                <td>{item.active ? 'active' : 'inactive'}</td>
                <td>
                  <code>{item.issuer}</code>
                </td>
                <td>{item.oidcClientSecretConfigured ? 'configured' : 'none'}</td>
                <td>
                  {item.activePlatformCount} active of {item.platformCount}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <section aria-labelledby="new-environment-title">
        <h2 id="new-environment-title">Add an identity environment</h2>
        <EnvironmentForm
          onSaved={(item) => navigate(`/environments/${encodeURIComponent(item.environmentKey)}`)}
        />
      </section>
    </>
  );
}

type Draft = {
  environmentKey: string;
  displayName: string;
  tier: Tier;
  issuer: string;
  oidcClientId: string;
  oidcClientSecret: string;
  removeSecret: boolean;
  postLogoutRedirectUri: string;
};

const draftOf = (item?: Environment): Draft => ({
  environmentKey: item?.environmentKey ?? '',
  displayName: item?.displayName ?? '',
  tier: item?.tier ?? 'development',
  issuer: item?.issuer ?? '',
  oidcClientId: item?.oidcClientId ?? '',
  oidcClientSecret: '',
  removeSecret: false,
  postLogoutRedirectUri: item?.postLogoutRedirectUri ?? '',
});

/** Create (no `existing`) or edit an environment. The client secret is write-only. */
function EnvironmentForm(props: { existing?: Environment; onSaved: (item: Environment) => void }) {
  const { existing } = props;
  const [draft, setDraft] = useState(() => draftOf(existing));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<unknown>();
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) =>
    setDraft((previous) => ({ ...previous, [name]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(undefined);
    const found: Record<string, string> = {};
    if (existing === undefined && !/^[A-Z][A-Z0-9_]{1,31}$/.test(draft.environmentKey)) {
      found.environmentKey = 'Use 2 to 32 capital letters, digits or _, starting with a letter.';
    }
    if (!/^[0-9A-Za-z@._~-]{1,128}$/.test(draft.oidcClientId))
      found.oidcClientId = 'Letters, digits and @._~- only (1 to 128).';
    if (draft.displayName.trim() === '') found.displayName = 'A display name is required.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    try {
      const common = {
        displayName: draft.displayName.trim(),
        tier: draft.tier,
        issuer: draft.issuer.trim(),
        oidcClientId: draft.oidcClientId,
      };
      const saved =
        existing === undefined
          ? await unwrap(
              api.POST('/v1/identity-environments', {
                body: {
                  ...common,
                  environmentKey: draft.environmentKey,
                  ...(draft.oidcClientSecret === ''
                    ? {}
                    : { oidcClientSecret: draft.oidcClientSecret }),
                  ...(draft.postLogoutRedirectUri === ''
                    ? {}
                    : { postLogoutRedirectUri: draft.postLogoutRedirectUri }),
                },
              }),
            )
          : await unwrap(
              api.PATCH('/v1/identity-environments/{environmentKey}', {
                params: { path: { environmentKey: existing.environmentKey } },
                body: {
                  ...common,
                  ...(draft.removeSecret
                    ? { oidcClientSecret: null }
                    : draft.oidcClientSecret === ''
                      ? {}
                      : { oidcClientSecret: draft.oidcClientSecret }),
                  postLogoutRedirectUri:
                    draft.postLogoutRedirectUri === '' ? null : draft.postLogoutRedirectUri,
                },
              }),
            );
      set('oidcClientSecret', '');
      props.onSaved(saved);
    } catch (error) {
      if (error instanceof ApiProblem) setErrors(error.fieldErrors());
      setProblem(error);
    }
  };
  const id = existing === undefined ? 'new-env' : 'env';
  const text = (name: keyof Draft, label: string, hint?: string, type = 'text') => (
    <Field id={`${id}-${name}`} label={label} error={errors[name]} hint={hint}>
      {(aria) => (
        <input
          {...aria}
          type={type}
          autoComplete="off"
          value={String(draft[name])}
          onChange={(event) =>
            set(
              name,
              (name === 'environmentKey'
                ? event.target.value.toUpperCase()
                : event.target.value) as never,
            )
          }
        />
      )}
    </Field>
  );
  return (
    <form
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-label={
        existing === undefined ? 'Add an identity environment' : 'Edit the identity environment'
      }
    >
      {existing === undefined
        ? text(
            'environmentKey',
            'Environment key',
            'Capital letters, digits and _; cannot change later.',
          )
        : null}
      {text('displayName', 'Display name')}
      <Field
        id={`${id}-tier`}
        label="Tier"
        error={errors.tier}
        hint="Cannot change while platforms are bound."
      >
        {(aria) => (
          <select
            {...aria}
            value={draft.tier}
            onChange={(event) => set('tier', event.target.value as Tier)}
          >
            <option value="production">production</option>
            <option value="staging">staging</option>
            <option value="development">development</option>
          </select>
        )}
      </Field>
      {text(
        'issuer',
        'Issuer',
        'HTTPS (HTTP only for localhost), without query or fragment.',
        'url',
      )}
      {text('oidcClientId', "The gateway's client id")}
      {text(
        'oidcClientSecret',
        existing === undefined ? "The gateway's client secret" : 'Replace the client secret',
        existing?.oidcClientSecretConfigured === true
          ? 'A secret is stored. It is never shown; leave empty to keep it.'
          : 'Write-only: it is never shown again.',
        'password',
      )}
      {existing?.oidcClientSecretConfigured === true ? (
        <div className="field checkbox">
          <input
            id={`${id}-remove-secret`}
            type="checkbox"
            checked={draft.removeSecret}
            onChange={(event) => set('removeSecret', event.target.checked)}
          />
          <label htmlFor={`${id}-remove-secret`}>Remove the stored secret</label>
        </div>
      ) : null}
      {text('postLogoutRedirectUri', 'Post-logout redirect URI (optional)', undefined, 'url')}
      <ProblemAlert problem={problem} />
      <button type="submit" className="primary">
        {existing === undefined ? 'Add the environment' : 'Save the environment'}
      </button>
    </form>
  );
}

export function EnvironmentPage({ environmentKey }: { environmentKey: string }) {
  usePageTitle(`Identity environment ${environmentKey}`);
  const path = { params: { path: { environmentKey } } };
  const loaded = useLoad(
    async () => unwrap(api.GET('/v1/identity-environments/{environmentKey}', path)),
    environmentKey,
  );
  const [notice, setNotice] = useState<string>();
  const [report, setReport] = useState<Schemas['ValidationReport']>();
  const [problem, setProblem] = useState<unknown>();
  const item = loaded.data;
  if (item === undefined) {
    return (
      <>
        <h1>Identity environment {environmentKey}</h1>
        <ProblemAlert problem={loaded.problem} />
        {loaded.loading ? <Loading what="the environment" /> : null}
      </>
    );
  }
  const validate = async () => {
    setProblem(undefined);
    try {
      setReport(
        await unwrap(api.POST('/v1/identity-environments/{environmentKey}/validate', path)),
      );
    } catch (error) {
      setProblem(error);
    }
  };
  const deployment = item.source === 'deployment';
  return (
    <>
      <h1>
        {item.displayName} <span className="key">{item.environmentKey}</span>
      </h1>
      <Notice>{notice}</Notice>
      <p>
        {item.tier} · {item.source} · {item.active ? 'active' : 'inactive'} · issuer{' '}
        <code>{item.issuer}</code>
      </p>
      <section aria-labelledby="validate-title">
        <h2 id="validate-title">Validate</h2>
        <p>
          Read-only checks of the issuer's discovery, endpoints and keys, and of the client
          configuration. They do not prove that the identity service accepts the client's
          credentials.
        </p>
        <button type="button" className="primary" onClick={() => void validate()}>
          Validate the environment
        </button>
        <ProblemAlert problem={problem} />
        {report === undefined ? null : <ValidationReport report={report} />}
      </section>
      <section aria-labelledby="env-platforms-title">
        <h2 id="env-platforms-title">Platforms</h2>
        {item.platforms.length === 0 ? (
          <p>No platform uses this environment.</p>
        ) : (
          <ul>
            {item.platforms.map((platform) => (
              <li key={platform.platformKey}>
                <Link to={`/platforms/${encodeURIComponent(platform.platformKey)}`}>
                  {platform.platformKey}
                </Link>{' '}
                — {platform.displayName}
                {platform.active ? '' : ' (inactive)'}
              </li>
            ))}
          </ul>
        )}
      </section>
      {deployment ? (
        <p>
          The deployment environment comes from the gateway's configuration and cannot be changed
          here.
        </p>
      ) : (
        <>
          <section aria-labelledby="env-status-title">
            <h2 id="env-status-title">Status</h2>
            {item.active ? (
              <ConfirmAction
                label="Deactivate the environment"
                title={`Deactivate ${item.environmentKey}?`}
                danger
                confirmLabel="Deactivate"
                consequences={[
                  'Sign-ins and Bearer tokens of this environment are refused while it is inactive.',
                  'The gateway refuses this (409) while active platforms use it: deactivate or move them first.',
                ]}
                onConfirm={async () => {
                  await unwrap(api.DELETE('/v1/identity-environments/{environmentKey}', path));
                  setNotice('Deactivated.');
                  loaded.reload();
                }}
              />
            ) : (
              <ConfirmAction
                label="Activate the environment"
                title={`Activate ${item.environmentKey}?`}
                confirmLabel="Activate"
                consequences={['Its users can sign in again through its platforms.']}
                onConfirm={async () => {
                  await unwrap(
                    api.POST('/v1/identity-environments/{environmentKey}/activate', path),
                  );
                  setNotice('Activated.');
                  loaded.reload();
                }}
              />
            )}
          </section>
          <section aria-labelledby="env-edit-title">
            <h2 id="env-edit-title">Edit</h2>
            <EnvironmentForm
              key={item.updatedAt}
              existing={item}
              onSaved={() => {
                setNotice('The environment is saved.');
                loaded.reload();
              }}
            />
          </section>
        </>
      )}
    </>
  );
}

function ValidationReport({ report }: { report: Schemas['ValidationReport'] }) {
  return (
    <div role="status">
      <p>
        <strong>{report.ok ? 'Every check passed.' : 'Some checks failed.'}</strong>
      </p>
      <table>
        <caption className="visually-hidden">Validation checks</caption>
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Result</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {report.checks.map((check) => (
            <tr key={check.name}>
              <th scope="row">{check.name}</th>
              <td>
                <span className={`check check-${check.status}`}>{check.status}</span>
              </td>
              <td>{check.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
