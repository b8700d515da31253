import { useState, type FormEvent } from 'react';
import { ApiProblem, type Schemas } from '../api/client.js';
import { ProblemAlert } from '../ui/alerts.js';
import { Checkbox, Field } from '../ui/fields.js';

type RedirectPairInput = Schemas['RedirectPairInput'];
type Mode = 'none' | 'platform' | 'central';

export type PlatformDraft = {
  platformKey: string;
  displayName: string;
  identityEnvironmentKey: string;
  defaultOnboardingMode: Mode;
  centralOnboardingEnabled: boolean;
  platformOnboardingPath: string;
  adminConsole: boolean;
  redirectPairs: RedirectPairInput[];
};

export const PLATFORM_KEY_PATTERN = /^[A-Z][A-Z0-9_]{1,63}$/;

export function emptyPlatformDraft(): PlatformDraft {
  return {
    platformKey: '',
    displayName: '',
    identityEnvironmentKey: 'PROD',
    defaultOnboardingMode: 'none',
    centralOnboardingEnabled: false,
    platformOnboardingPath: '',
    adminConsole: false,
    redirectPairs: [{ label: 'web', returnUrl: '', callbackUrl: '', isDefault: true }],
  };
}

/** The checks the gateway makes too, so most mistakes show before the request (spec 2.1, 2.2). */
export function checkPlatformDraft(
  draft: PlatformDraft,
  creating: boolean,
): Record<string, string> {
  const errors: Record<string, string> = {};
  if (creating && !PLATFORM_KEY_PATTERN.test(draft.platformKey)) {
    errors.platformKey = 'Use 2 to 64 capital letters, digits or _, starting with a letter.';
  }
  if (draft.displayName.trim() === '') errors.displayName = 'A display name is required.';
  if (draft.redirectPairs.length === 0) errors.redirectPairs = 'Add at least one redirect pair.';
  else if (draft.redirectPairs.filter((pair) => pair.isDefault).length !== 1) {
    errors.redirectPairs = 'Exactly one pair must be the default.';
  }
  draft.redirectPairs.forEach((pair, index) => {
    if (pair.label.trim() === '') errors[`redirectPairs.${index}.label`] = 'A label is required.';
    for (const name of ['returnUrl', 'callbackUrl'] as const) {
      if (!isHttpUrl(pair[name])) {
        errors[`redirectPairs.${index}.${name}`] = 'Enter an absolute http(s) URL.';
      }
    }
  });
  if (draft.defaultOnboardingMode === 'central' && !draft.centralOnboardingEnabled) {
    errors.centralOnboardingEnabled = 'Central onboarding must be enabled for the central mode.';
  }
  return errors;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

type PlatformFormProps = {
  initial: PlatformDraft;
  creating: boolean;
  environments: readonly Schemas['IdentityEnvironment'][];
  submitLabel: string;
  onSubmit: (draft: PlatformDraft) => Promise<void>;
};

/** Create or edit a platform: settings and redirect pairs, errors next to each field. */
export function PlatformForm(props: PlatformFormProps) {
  const [draft, setDraft] = useState(props.initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof PlatformDraft>(name: K, value: PlatformDraft[K]) =>
    setDraft((previous) => ({ ...previous, [name]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = checkPlatformDraft(draft, props.creating);
    setErrors(found);
    setProblem(undefined);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      await props.onSubmit(draft);
    } catch (error) {
      if (error instanceof ApiProblem) setErrors(error.fieldErrors());
      setProblem(error);
    } finally {
      setBusy(false);
    }
  };
  const prefix = props.creating ? 'new-platform' : 'platform';
  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-label={props.submitLabel}>
      {props.creating ? (
        <Field
          id={`${prefix}-key`}
          label="Platform key"
          error={errors.platformKey}
          hint="Capital letters, digits and _; it cannot change later."
        >
          {(aria) => (
            <input
              {...aria}
              value={draft.platformKey}
              autoComplete="off"
              onChange={(event) => set('platformKey', event.target.value.toUpperCase())}
            />
          )}
        </Field>
      ) : null}
      <Field id={`${prefix}-name`} label="Display name" error={errors.displayName}>
        {(aria) => (
          <input
            {...aria}
            value={draft.displayName}
            onChange={(event) => set('displayName', event.target.value)}
          />
        )}
      </Field>
      <Field
        id={`${prefix}-environment`}
        label="Identity environment"
        error={errors.identityEnvironmentKey}
        hint="Where the platform's users sign in. Changing it is audited."
      >
        {(aria) => (
          <select
            {...aria}
            value={draft.identityEnvironmentKey}
            onChange={(event) => set('identityEnvironmentKey', event.target.value)}
          >
            {props.environments.map((environment) => (
              <option key={environment.environmentKey} value={environment.environmentKey}>
                {environment.environmentKey} — {environment.displayName}
                {environment.active ? '' : ' (inactive)'}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        id={`${prefix}-mode`}
        label="Onboarding mode"
        error={errors.defaultOnboardingMode}
        hint="none: no platform fields; platform: the platform asks itself; central: the identity UI asks before the handoff."
      >
        {(aria) => (
          <select
            {...aria}
            value={draft.defaultOnboardingMode}
            onChange={(event) => set('defaultOnboardingMode', event.target.value as Mode)}
          >
            <option value="none">none</option>
            <option value="platform">platform</option>
            <option value="central">central</option>
          </select>
        )}
      </Field>
      <Checkbox
        id={`${prefix}-central`}
        label="Central onboarding enabled"
        checked={draft.centralOnboardingEnabled}
        onChange={(checked) => set('centralOnboardingEnabled', checked)}
      />
      {errors.centralOnboardingEnabled === undefined ? null : (
        <p className="field-error">{errors.centralOnboardingEnabled}</p>
      )}
      <Field
        id={`${prefix}-path`}
        label="Platform onboarding path (optional)"
        error={errors.platformOnboardingPath}
      >
        {(aria) => (
          <input
            {...aria}
            value={draft.platformOnboardingPath}
            onChange={(event) => set('platformOnboardingPath', event.target.value)}
          />
        )}
      </Field>
      <Checkbox
        id={`${prefix}-admin-console`}
        label="Admin console"
        checked={draft.adminConsole}
        onChange={(checked) => set('adminConsole', checked)}
        hint="Sessions from this platform's sign-ins carry a platform_admin's full admin power. Only for consoles you trust."
      />
      <RedirectPairsEditor
        pairs={draft.redirectPairs}
        errors={errors}
        onChange={(pairs) => set('redirectPairs', pairs)}
      />
      <ProblemAlert problem={problem} />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Saving…' : props.submitLabel}
      </button>
    </form>
  );
}

function RedirectPairsEditor(props: {
  pairs: RedirectPairInput[];
  errors: Record<string, string>;
  onChange: (pairs: RedirectPairInput[]) => void;
}) {
  const { pairs, errors } = props;
  const update = (index: number, change: Partial<RedirectPairInput>) =>
    props.onChange(pairs.map((pair, at) => (at === index ? { ...pair, ...change } : pair)));
  const makeDefault = (index: number) =>
    props.onChange(pairs.map((pair, at) => ({ ...pair, isDefault: at === index })));
  return (
    <fieldset className="pairs">
      <legend>Redirect pairs</legend>
      <p className="hint">
        A sign-in returns to the pair whose return URL matches; its callback receives the code. Each
        pair gets its own BFF key. Removing a pair deletes its key.
      </p>
      {errors.redirectPairs === undefined ? null : (
        <p className="field-error" role="alert">
          {errors.redirectPairs}
        </p>
      )}
      {pairs.map((pair, index) => (
        <div
          className="pair"
          key={pair.id ?? `new-${index}`}
          role="group"
          aria-label={`Redirect pair ${index + 1}`}
        >
          <Field
            id={`pair-${index}-label`}
            label="Label"
            error={errors[`redirectPairs.${index}.label`]}
          >
            {(aria) => (
              <input
                {...aria}
                value={pair.label}
                onChange={(event) => update(index, { label: event.target.value })}
              />
            )}
          </Field>
          <Field
            id={`pair-${index}-return`}
            label="Return URL"
            error={errors[`redirectPairs.${index}.returnUrl`]}
          >
            {(aria) => (
              <input
                {...aria}
                type="url"
                value={pair.returnUrl}
                onChange={(event) => update(index, { returnUrl: event.target.value })}
              />
            )}
          </Field>
          <Field
            id={`pair-${index}-callback`}
            label="Callback URL"
            error={errors[`redirectPairs.${index}.callbackUrl`]}
          >
            {(aria) => (
              <input
                {...aria}
                type="url"
                value={pair.callbackUrl}
                onChange={(event) => update(index, { callbackUrl: event.target.value })}
              />
            )}
          </Field>
          <div className="field checkbox">
            <input
              id={`pair-${index}-default`}
              type="radio"
              name="default-pair"
              checked={pair.isDefault}
              onChange={() => makeDefault(index)}
            />
            <label htmlFor={`pair-${index}-default`}>Default pair</label>
          </div>
          <button
            type="button"
            className="secondary small"
            disabled={pairs.length === 1}
            onClick={() => props.onChange(pairs.filter((_, at) => at !== index))}
          >
            Remove pair {index + 1}
          </button>
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() =>
          props.onChange([
            ...pairs,
            { label: '', returnUrl: '', callbackUrl: '', isDefault: pairs.length === 0 },
          ])
        }
      >
        Add a redirect pair
      </button>
    </fieldset>
  );
}
