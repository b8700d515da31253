// The identity UI's onboarding flow (spec 4.9): load the requirements, validate client-side
// with the gateway's rules, PUT the values, POST complete (platform scope; it must answer
// COMPLETE) or read the global status (scope=global), then send the browser to
// `GET /v1/auth/resume?transaction=<id>` (spec 4.3), which re-evaluates onboarding itself.

import type { FieldControl } from './field-controls.js';
import { checkValues, requiredMessage, type RawValue } from './form-values.js';
import { createGatewayApi, type GatewayApi, type GatewayProblem } from './gateway-api.js';
import { renderFields, type RenderedFields } from './onboarding-form.js';
import {
  findPageElements,
  showMessage,
  type PageConfig,
  type PageElements,
} from './page-elements.js';
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
  const flow: Flow = {
    options,
    config,
    elements,
    api: options.api ?? createGatewayApi(config),
    loaded: undefined,
    busy: false,
  };
  const unexpected = (error: unknown) => {
    setBusy(flow, false);
    alert(
      flow,
      `Something went wrong on this page: ${error instanceof Error ? error.message : String(error)}`,
    );
  };
  elements.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit(flow).catch(unexpected);
  });
  void load(flow).catch(unexpected);
}

/** The page, the gateway API, and the state of one onboarding form. */
type Flow = {
  options: OnboardingFlowOptions;
  config: PageConfig;
  elements: PageElements;
  api: GatewayApi;
  loaded: Loaded | undefined;
  /** A save is under way: the form is disabled. */
  busy: boolean;
};

function alert(flow: Flow, ...lines: string[]): void {
  showMessage(flow.elements.alert, lines);
}

function notice(flow: Flow, ...lines: string[]): void {
  showMessage(flow.elements.notice, lines);
}

function setBusy(flow: Flow, value: boolean): void {
  flow.busy = value;
  flow.elements.submit.disabled = value;
  flow.elements.form.setAttribute('aria-busy', String(value));
}

/** Loads the requirements and shows the form, keeping what the user had `entered`. */
async function load(flow: Flow, entered: Entered = new Map()): Promise<void> {
  const { elements } = flow;
  elements.loading.hidden = false;
  const answer = await flow.api.requirements();
  elements.loading.hidden = true;
  if (!answer.ok) {
    elements.form.hidden = true;
    alert(flow, answer.problem.message);
    return;
  }
  let requirements: Requirements;
  try {
    requirements = readRequirements(answer.body);
  } catch (error) {
    if (!(error instanceof UnreadableRequirements)) throw error;
    elements.form.hidden = true;
    alert(flow, error.message);
    return;
  }
  showHeading(flow.options.doc, elements, flow.config.scope, requirements);
  const fields = renderFields(elements.fields, requirements.requirements, (requirement) => {
    const previous = entered.get(requirement.fieldKey);
    return previous !== undefined && previous.fieldType === requirement.fieldType
      ? previous.raw
      : requirement.currentValue;
  });
  flow.loaded = { requirements, fields };
  elements.form.hidden = false;
}

/** Marks fields with messages; returns the messages of keys that are not on the page. */
function markFields(flow: Flow, messages: ReadonlyMap<string, string>): string[] {
  const elsewhere: string[] = [];
  for (const [fieldKey, message] of messages) {
    const control = flow.loaded?.fields.byKey.get(fieldKey);
    if (control === undefined) elsewhere.push(`${fieldKey}: ${message}`);
    else control.showError(message);
  }
  // The first marked field in page order takes the focus.
  flow.loaded?.fields.controls
    .find((control) => messages.has(control.requirement.fieldKey))
    ?.focus();
  return elsewhere;
}

function markMissing(flow: Flow, missingFields: readonly string[], fallback: string): void {
  if (missingFields.length === 0) {
    alert(flow, fallback);
    return;
  }
  const elsewhere = markFields(flow, new Map(missingFields.map((key) => [key, requiredMessage])));
  alert(flow, 'Some required fields are still missing.', ...elsewhere);
}

/** Spec 4.9: 400 names the offending fields, 404 means the schema changed meanwhile. */
async function saveFailed(flow: Flow, problem: GatewayProblem): Promise<void> {
  if (problem.status === 400 && problem.code === 'VALIDATION_ERROR') {
    const issues = valueIssues(problem.details);
    if (issues.fields.length > 0 || issues.other.length > 0) {
      const elsewhere = markFields(
        flow,
        new Map(issues.fields.map((issue) => [issue.fieldKey, issue.message])),
      );
      alert(flow, 'Check the fields marked below.', ...issues.other, ...elsewhere);
      return;
    }
  }
  if (problem.status === 404) {
    const entered: Entered = new Map(
      (flow.loaded?.fields.controls ?? []).map((control) => [
        control.requirement.fieldKey,
        { fieldType: control.requirement.fieldType, raw: control.read().raw },
      ]),
    );
    notice(
      flow,
      'The questions changed while you were answering. They are up to date now: check your answers and continue.',
    );
    await load(flow, entered);
    return;
  }
  alert(flow, problem.message);
}

/** Platform scope: complete must answer COMPLETE; 409 names the missing fields. */
async function completePlatform(flow: Flow): Promise<boolean> {
  const answer = await flow.api.complete();
  if (answer.ok) {
    if (statusOf(answer.body) === 'COMPLETE') return true;
    markMissing(
      flow,
      missingFieldsOf(answer.body),
      'Your answers are saved, but sign-up is not complete.',
    );
    return false;
  }
  if (answer.problem.status === 409) {
    markMissing(flow, missingFieldsOf(answer.problem.details), answer.problem.message);
  } else {
    alert(flow, answer.problem.message);
  }
  return false;
}

/** Global scope: only a COMPLETE global status continues. */
async function globalComplete(flow: Flow): Promise<boolean> {
  const answer = await flow.api.globalStatus();
  if (!answer.ok) {
    alert(flow, answer.problem.message);
    return false;
  }
  if (statusOf(answer.body) === 'COMPLETE') return true;
  markMissing(
    flow,
    missingFieldsOf(answer.body),
    'Your answers are saved, but your profile is not complete.',
  );
  return false;
}

/** Checks the values on the page, saves them, completes the scope, then resumes sign-in. */
async function submit(flow: Flow): Promise<void> {
  if (flow.busy || flow.loaded === undefined) return;
  const { requirements, fields } = flow.loaded;
  alert(flow);
  notice(flow);
  for (const control of fields.controls) control.clearError();
  const checked = checkValues(requirements.requirements, (requirement) =>
    (fields.byKey.get(requirement.fieldKey) as FieldControl).read(),
  );
  if (checked.errors.size > 0) {
    markFields(flow, checked.errors);
    alert(flow, 'Check the fields marked below.');
    return;
  }
  setBusy(flow, true);
  let leaving = false;
  try {
    const saved = await flow.api.putValues({
      requirementVersion: requirements.requirementVersion,
      values: checked.values,
    });
    if (!saved.ok) {
      await saveFailed(flow, saved.problem);
      return;
    }
    const complete =
      flow.config.scope === 'global' ? await globalComplete(flow) : await completePlatform(flow);
    if (!complete) return;
    leaving = true;
    flow.options.navigate(flow.api.resumeUrl(flow.config.resume));
  } finally {
    if (!leaving) setBusy(flow, false);
  }
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
