import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client.js';
import { Link } from '../app/router.js';
import { Loading, Notice, ProblemAlert } from '../ui/alerts.js';
import { useLoad } from '../ui/use-load.js';
import { CredentialsSection } from './platform-credentials.js';
import { usePageTitle } from './page-title.js';
import { PlatformForm, type PlatformDraft } from './platform-form.js';
import { StatusBadge, useEnvironments } from './platforms-page.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { SecretPanel } from '../ui/secret-panel.js';

type Platform = Schemas['Platform'];

export function PlatformPage({ platformKey }: { platformKey: string }) {
  usePageTitle(`Platform ${platformKey}`);
  const path = { params: { path: { platformKey } } };
  const loaded = useLoad(
    async () => unwrap(api.GET('/v1/platforms/{platformKey}', path)),
    platformKey,
  );
  const environments = useEnvironments();
  const [notice, setNotice] = useState<string>();
  const [current, setCurrent] = useState<Platform>();
  const [issued, setIssued] = useState<Schemas['IssuedCredential'][]>([]);
  const platform = current ?? loaded.data;
  if (platform === undefined) {
    return (
      <>
        <h1>Platform {platformKey}</h1>
        <ProblemAlert problem={loaded.problem} />
        {loaded.loading ? <Loading what="the platform" /> : null}
      </>
    );
  }
  const changed = (next: Platform, message: string) => {
    setCurrent(next);
    setNotice(message);
  };
  const save = async (draft: PlatformDraft) => {
    const answer = await unwrap(
      api.PATCH('/v1/platforms/{platformKey}', {
        ...path,
        body: {
          displayName: draft.displayName.trim(),
          identityEnvironmentKey: draft.identityEnvironmentKey,
          defaultOnboardingMode: draft.defaultOnboardingMode,
          centralOnboardingEnabled: draft.centralOnboardingEnabled,
          adminConsole: draft.adminConsole,
          platformOnboardingPath:
            draft.platformOnboardingPath.trim() === '' ? null : draft.platformOnboardingPath.trim(),
          redirectPairs: draft.redirectPairs,
        },
      }),
    );
    setIssued(answer.credentials);
    changed(
      answer.platform,
      answer.credentials.length === 0
        ? 'The settings are saved.'
        : 'The settings are saved; new pairs got BFF keys.',
    );
  };
  return (
    <>
      <div className="page-head">
        <h1>
          {platform.displayName} <span className="key">{platform.platformKey}</span>
        </h1>
        <StatusBadge status={platform.status} />
      </div>
      <Notice>{notice}</Notice>
      <SecretPanel
        credentials={issued}
        onDismiss={() => setIssued([])}
        pairLabel={(id) =>
          platform.redirectPairs.find((pair) => pair.id === id)?.label ?? 'its pair'
        }
      />
      <p>
        Environment {platform.identityEnvironment.key} · onboarding {platform.defaultOnboardingMode}
        , requirement version {platform.requirementVersion} ·{' '}
        <Link to={`/onboarding/${encodeURIComponent(platform.platformKey)}`}>
          Onboarding fields
        </Link>{' '}
        ·{' '}
        <Link to={`/audit?target=${encodeURIComponent(platform.platformKey)}`}>Audit records</Link>
      </p>
      <Lifecycle platform={platform} onChanged={changed} />
      <CredentialsSection platform={platform} onChanged={changed} />
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings and redirect pairs</h2>
        <ProblemAlert problem={environments.problem} />
        {platform.status === 'archived' ? (
          <p>An archived platform cannot change; restore it first.</p>
        ) : (
          <PlatformForm
            key={platform.updatedAt}
            creating={false}
            environments={environments.data ?? []}
            submitLabel="Save the settings"
            onSubmit={save}
            initial={draftOf(platform)}
          />
        )}
      </section>
    </>
  );
}

function draftOf(platform: Platform): PlatformDraft {
  return {
    platformKey: platform.platformKey,
    displayName: platform.displayName,
    identityEnvironmentKey: platform.identityEnvironment.key,
    defaultOnboardingMode: platform.defaultOnboardingMode,
    centralOnboardingEnabled: platform.centralOnboardingEnabled,
    platformOnboardingPath: platform.platformOnboardingPath ?? '',
    adminConsole: platform.adminConsole,
    redirectPairs: platform.redirectPairs.map((pair) => ({ ...pair })),
  };
}

type Step = 'deactivate' | 'activate' | 'archive' | 'restore';

/** Spec 3.4: what each state change does, said before it is made. */
const STEPS: Readonly<Record<Step, { label: string; consequences: string[]; danger: boolean }>> = {
  deactivate: {
    label: 'Deactivate',
    danger: true,
    consequences: [
      'Sign-ins through this platform stop at once (the start answers 404).',
      'Every gateway session created by its sign-ins ends now and stays ended, also after it is activated again.',
      'Its keys are kept, but the gateway refuses exchange and introspection while it is inactive.',
    ],
  },
  activate: {
    label: 'Activate',
    danger: false,
    consequences: [
      'Sign-ins through this platform work again, with its current redirect pairs and keys.',
      'Sessions that ended with the deactivation stay ended; users sign in again.',
    ],
  },
  archive: {
    label: 'Archive',
    danger: true,
    consequences: [
      'Every key of the platform is revoked now; its backends can no longer authenticate.',
      'Its data (pairs, onboarding fields, values) is kept and its key stays reserved.',
      'A restored platform comes back inactive and without keys.',
    ],
  },
  restore: {
    label: 'Restore',
    danger: false,
    consequences: [
      'The platform becomes inactive again, without keys.',
      'Issue new keys, then activate it to allow sign-ins.',
    ],
  },
};

function Lifecycle({
  platform,
  onChanged,
}: {
  platform: Platform;
  onChanged: (next: Platform, message: string) => void;
}) {
  const steps: Step[] =
    platform.status === 'active'
      ? ['deactivate']
      : platform.status === 'inactive'
        ? ['activate', 'archive']
        : ['restore'];
  const run = async (step: Step) => {
    const params = { params: { path: { platformKey: platform.platformKey } } };
    const next = await unwrap(
      step === 'deactivate'
        ? api.DELETE('/v1/platforms/{platformKey}', params)
        : step === 'activate'
          ? api.POST('/v1/platforms/{platformKey}/activate', params)
          : step === 'archive'
            ? api.POST('/v1/platforms/{platformKey}/archive', params)
            : api.POST('/v1/platforms/{platformKey}/restore', params),
    );
    onChanged(next, `Platform ${platform.platformKey}: ${step} done.`);
  };
  return (
    <section aria-labelledby="lifecycle-title">
      <h2 id="lifecycle-title">Status</h2>
      <p>
        The platform is <strong>{platform.status}</strong>.
      </p>
      <div className="actions">
        {steps.map((step) => (
          <ConfirmAction
            key={step}
            label={`${STEPS[step].label} the platform`}
            title={`${STEPS[step].label} ${platform.platformKey}?`}
            consequences={STEPS[step].consequences}
            confirmLabel={`${STEPS[step].label} ${platform.platformKey}`}
            danger={STEPS[step].danger}
            onConfirm={() => run(step)}
          />
        ))}
      </div>
    </section>
  );
}
