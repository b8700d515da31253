import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { Link, navigate } from '../app/router.js';
import { Loading, ProblemAlert } from '../ui/alerts.js';
import { Checkbox, Field } from '../ui/fields.js';
import { SecretPanel } from '../ui/secret-panel.js';
import { useLoad } from '../ui/use-load.js';
import { usePageTitle } from './page-title.js';
import { emptyPlatformDraft, PlatformForm, type PlatformDraft } from './platform-form.js';

export function useEnvironments() {
  return useLoad(
    async () => (await unwrap(api.GET('/v1/identity-environments'))).items,
    'environments',
  );
}

export function PlatformsPage() {
  usePageTitle('Platforms');
  const [environment, setEnvironment] = useState('');
  const [archived, setArchived] = useState(false);
  const environments = useEnvironments();
  const platforms = useLoad(
    async () =>
      (
        await unwrap(
          api.GET('/v1/platforms', {
            params: {
              query: {
                ...(environment === '' ? {} : { identityEnvironmentKey: environment }),
                ...(archived ? { archived: 'true' as const } : {}),
              },
            },
          }),
        )
      ).items,
    `${environment}|${archived}`,
  );
  return (
    <>
      <div className="page-head">
        <h1>Platforms</h1>
        <Link className="button primary" to="/platforms/new">
          Register a platform
        </Link>
      </div>
      <div className="filters" role="search" aria-label="Filter platforms">
        <Field id="filter-environment" label="Identity environment">
          {(aria) => (
            <select
              {...aria}
              value={environment}
              onChange={(event) => setEnvironment(event.target.value)}
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
        <Checkbox
          id="filter-archived"
          label="Archived platforms only"
          checked={archived}
          onChange={setArchived}
        />
      </div>
      <ProblemAlert problem={environments.problem ?? platforms.problem} />
      {platforms.data === undefined ? (
        platforms.loading ? (
          <Loading what="platforms" />
        ) : null
      ) : (
        <PlatformTable platforms={platforms.data} archived={archived} />
      )}
    </>
  );
}

function PlatformTable({
  platforms,
  archived,
}: {
  platforms: Schemas['Platform'][];
  archived: boolean;
}) {
  if (platforms.length === 0) {
    return (
      <p>{archived ? 'No archived platforms.' : 'No platforms yet. Register the first one.'}</p>
    );
  }
  return (
    <table>
      <caption className="visually-hidden">Platforms</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Name</th>
          <th scope="col">Environment</th>
          <th scope="col">Status</th>
          <th scope="col">Onboarding</th>
          <th scope="col">Pairs</th>
          <th scope="col">Keys</th>
        </tr>
      </thead>
      <tbody>
        {platforms.map((platform) => (
          <tr key={platform.id}>
            <th scope="row">
              <Link to={`/platforms/${encodeURIComponent(platform.platformKey)}`}>
                {platform.platformKey}
              </Link>
            </th>
            <td>
              {platform.displayName}
              {platform.adminConsole ? <span className="badge">admin console</span> : null}
            </td>
            <td>{platform.identityEnvironment.key}</td>
            <td>
              <StatusBadge status={platform.status} />
            </td>
            <td>
              {platform.defaultOnboardingMode} · v{platform.requirementVersion}
            </td>
            <td>{platform.redirectPairs.length}</td>
            <td>{platform.credentials.length}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`status status-${status}`}>{status}</span>;
}

export function NewPlatformPage() {
  usePageTitle('Register a platform');
  const environments = useEnvironments();
  const [created, setCreated] = useState<Schemas['CredentialResponse']>();
  const create = async (draft: PlatformDraft) => {
    const answer = await unwrap(
      api.POST('/v1/platforms', {
        body: {
          platformKey: draft.platformKey,
          displayName: draft.displayName.trim(),
          identityEnvironmentKey: draft.identityEnvironmentKey,
          defaultOnboardingMode: draft.defaultOnboardingMode,
          centralOnboardingEnabled: draft.centralOnboardingEnabled,
          adminConsole: draft.adminConsole,
          redirectPairs: draft.redirectPairs,
          ...(draft.platformOnboardingPath.trim() === ''
            ? {}
            : { platformOnboardingPath: draft.platformOnboardingPath.trim() }),
        },
      }),
    );
    setCreated(answer);
  };
  if (created !== undefined) {
    const key = created.platform.platformKey;
    return (
      <>
        <h1>Platform {key} registered</h1>
        <SecretPanel
          credentials={created.credentials}
          pairLabel={(id) =>
            created.platform.redirectPairs.find((pair) => pair.id === id)?.label ?? 'its pair'
          }
          onDismiss={() => navigate(`/platforms/${encodeURIComponent(key)}`)}
        />
      </>
    );
  }
  return (
    <>
      <h1>Register a platform</h1>
      <ProblemAlert problem={environments.problem} />
      {environments.data === undefined ? (
        <Loading what="identity environments" />
      ) : (
        <PlatformForm
          initial={emptyPlatformDraft()}
          creating
          environments={environments.data}
          submitLabel="Register the platform"
          onSubmit={create}
        />
      )}
    </>
  );
}
