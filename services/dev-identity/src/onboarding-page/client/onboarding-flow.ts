// The identity UI's onboarding flow (spec 4.9): load the requirements, validate client-side
// with the gateway's rules, PUT the values, POST complete (platform scope; it must answer
// COMPLETE) or read the global status (scope=global), then send the browser to
// `GET /v1/auth/resume?transaction=<id>` (spec 4.3), which re-evaluates onboarding itself.

import type { FieldControl } from './field-controls.js';
import { checkValues, requiredMessage, type RawValue } from './form-values.js';
import { createGatewayApi, type GatewayApi, type GatewayProblem } from './gateway-api.js';
import { renderFields, type RenderedFields } from './onboarding-form.js';
import { findPageElements, showMessage, type PageElements } from './page-elements.js';
import { missingFieldsOf, valueIssues } from './problem-details.js';
import { readRequirements, UnreadableRequirements, type Requirements } from './requirements.js';

export type OnboardingFlowOptions = {
  doc: Document;
  /** Leaves the page: `window.location.assign`. */
  navigate(url: string): void;
  /** Default: the gateway API at the page's `data-gateway`. */
  api?: GatewayApi;
};

type Loaded = { requirements: Requirements; fields: RenderedFields };

/** What the user had entered, kept across a reload of changed requirements. */
type Entered = ReadonlyMap<string, { fieldType: string; raw: RawValue }>;

export function startOnboarding(options: OnboardingFlowOptions): void {
  const { config, elements } = findPageElements(options.doc);
  const api = options.api ?? createGatewayApi(config);
  let loaded: Loaded | undefined;
  let busy = false;

  const alert = (...lines: string[]) => showMessage(elements.alert, lines);
  const notice = (...lines: string[]) => showMessage(elements.notice, lines);
  const setBusy = (value: boolean) => {
    busy = value;
    elements.submit.disabled = value;
    elements.form.setAttribute('aria-busy', String(value));
  };

  async function load(entered: Entered = new Map()): Promise<void> {
    elements.loading.hidden = false;
    const answer = await api.requirements();
    elements.loading.hidden = true;
    if (!answer.ok) {
      elements.form.hidden = true;
      alert(answer.problem.message);
      return;
    }
    let requirements: Requirements;
    try {
      requirements = readRequirements(answer.body);
    } catch (error) {
      if (!(error instanceof UnreadableRequirements)) throw error;
      elements.form.hidden = true;
      alert(error.message);
      return;
    }
    showHeading(options.doc, elements, config.scope, requirements);
    const fields = renderFields(elements.fields, requirements.requirements, (requirement) => {
      const previous = entered.get(requirement.fieldKey);
      return previous !== undefined && previous.fieldType === requirement.fieldType
        ? previous.raw
        : requirement.currentValue;
    });
    loaded = { requirements, fields };
    elements.form.hidden = false;
  }

  /** Marks fields with messages; returns the messages of keys that are not on the page. */
  const markFields = (messages: ReadonlyMap<string, string>): string[] => {
    const elsewhere: string[] = [];
    for (const [fieldKey, message] of messages) {
      const control = loaded?.fields.byKey.get(fieldKey);
      if (control === undefined) elsewhere.push(`${fieldKey}: ${message}`);
      else control.showError(message);
    }
    // The first marked field in page order takes the focus.
    loaded?.fields.controls.find((control) => messages.has(control.requirement.fieldKey))?.focus();
    return elsewhere;
  };

  const markMissing = (missingFields: readonly string[], fallback: string) => {
    if (missingFields.length === 0) {
      alert(fallback);
      return;
    }
    const elsewhere = markFields(new Map(missingFields.map((key) => [key, requiredMessage])));
    alert('Some required fields are still missing.', ...elsewhere);
  };

  /** Spec 4.9: 400 names the offending fields, 404 means the schema changed meanwhile. */
  async function saveFailed(problem: GatewayProblem): Promise<void> {
    if (problem.status === 400 && problem.code === 'VALIDATION_ERROR') {
      const issues = valueIssues(problem.details);
      if (issues.fields.length > 0 || issues.other.length > 0) {
        const elsewhere = markFields(
          new Map(issues.fields.map((issue) => [issue.fieldKey, issue.message])),
        );
        alert('Check the fields marked below.', ...issues.other, ...elsewhere);
        return;
      }
    }
    if (problem.status === 404) {
      const entered: Entered = new Map(
        (loaded?.fields.controls ?? []).map((control) => [
          control.requirement.fieldKey,
          { fieldType: control.requirement.fieldType, raw: control.read().raw },
        ]),
      );
      notice(
        'The questions changed while you were answering. They are up to date now: check your answers and continue.',
      );
      await load(entered);
      return;
    }
    alert(problem.message);
  }

  /** Platform scope: complete must answer COMPLETE; 409 names the missing fields. */
  async function completePlatform(): Promise<boolean> {
    const answer = await api.complete();
    if (answer.ok) {
      if (statusOf(answer.body) === 'COMPLETE') return true;
      markMissing(
        missingFieldsOf(answer.body),
        'Your answers are saved, but sign-up is not complete.',
      );
      return false;
    }
    if (answer.problem.status === 409) {
      markMissing(missingFieldsOf(answer.problem.details), answer.problem.message);
    } else {
      alert(answer.problem.message);
    }
    return false;
  }

  /** Global scope: only a COMPLETE global status continues. */
  async function globalComplete(): Promise<boolean> {
    const answer = await api.globalStatus();
    if (!answer.ok) {
      alert(answer.problem.message);
      return false;
    }
    if (statusOf(answer.body) === 'COMPLETE') return true;
    markMissing(
      missingFieldsOf(answer.body),
      'Your answers are saved, but your profile is not complete.',
    );
    return false;
  }

  async function submit(): Promise<void> {
    if (busy || loaded === undefined) return;
    const { requirements, fields } = loaded;
    alert();
    notice();
    for (const control of fields.controls) control.clearError();
    const checked = checkValues(requirements.requirements, (requirement) =>
      (fields.byKey.get(requirement.fieldKey) as FieldControl).read(),
    );
    if (checked.errors.size > 0) {
      markFields(checked.errors);
      alert('Check the fields marked below.');
      return;
    }
    setBusy(true);
    let leaving = false;
    try {
      const saved = await api.putValues({
        requirementVersion: requirements.requirementVersion,
        values: checked.values,
      });
      if (!saved.ok) {
        await saveFailed(saved.problem);
        return;
      }
      const complete =
        config.scope === 'global' ? await globalComplete() : await completePlatform();
      if (!complete) return;
      leaving = true;
      options.navigate(api.resumeUrl(config.resume));
    } finally {
      if (!leaving) setBusy(false);
    }
  }

  elements.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit().catch(unexpected);
  });
  const unexpected = (error: unknown) => {
    setBusy(false);
    alert(
      `Something went wrong on this page: ${error instanceof Error ? error.message : String(error)}`,
    );
  };
  void load().catch(unexpected);
}

function showHeading(
  doc: Document,
  elements: PageElements,
  scope: 'global' | 'platform',
  requirements: Requirements,
): void {
  const name = requirements.platformDisplayName;
  if (scope === 'global' || name === undefined || name === '') return;
  elements.title.textContent = `Complete your sign-up for ${name}`;
  elements.intro.textContent = `${name} needs a few more details before you continue.`;
  doc.title = elements.title.textContent;
}

/** The `status` of a status body (`COMPLETE`, `INCOMPLETE`, `IN_PROGRESS`, ...). */
function statusOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null
    ? (body as { status?: unknown }).status
    : undefined;
}
