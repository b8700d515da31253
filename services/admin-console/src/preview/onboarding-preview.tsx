import { useEffect, useRef, useState } from 'react';
import {
  checkValues,
  readRequirements,
  renderFields,
} from '@gateway/dev-identity/onboarding-preview';
import stylesheetUrl from 'virtual:onboarding-page-stylesheet';

/** A field as the preview shows it: a requirement of spec 2.14 without a saved value. */
export type PreviewField = Record<string, unknown> & { fieldKey: string };

/**
 * The identity UI's onboarding page as a user would see it, live: the page's own field
 * rendering and value checks (services/dev-identity's onboarding client, built on
 * @gateway/field-rules) and its stylesheet, in a shadow root so neither page's styles
 * reach the other. "Check" runs the page's checks on what was typed.
 */
export function OnboardingPreview(props: {
  title: string;
  intro: string;
  fields: readonly PreviewField[];
  requirementVersion: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [summary, setSummary] = useState('');
  const rendered = useRef<ReturnType<typeof renderFields> | undefined>(undefined);
  const requirements = useRef<ReturnType<typeof readRequirements> | undefined>(undefined);
  useEffect(() => {
    const element = host.current;
    if (element === null) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    const doc = element.ownerDocument;
    const link = doc.createElement('link');
    link.rel = 'stylesheet';
    link.href = stylesheetUrl;
    const page = doc.createElement('div');
    page.className = 'onboarding-page';
    const heading = doc.createElement('h1');
    heading.textContent = props.title;
    const intro = doc.createElement('p');
    intro.textContent = props.intro;
    const fields = doc.createElement('div');
    fields.id = 'onboarding-fields';
    page.append(heading, intro, fields);
    root.replaceChildren(link, page);
    try {
      requirements.current = readRequirements({
        requirementVersion: props.requirementVersion,
        requirements: props.fields,
      });
      rendered.current = renderFields(
        fields,
        requirements.current.requirements,
        (requirement) => requirement.currentValue,
      );
      setSummary('');
    } catch (error) {
      rendered.current = undefined;
      setSummary(error instanceof Error ? error.message : String(error));
    }
  }, [props.fields, props.requirementVersion, props.title, props.intro]);
  const check = () => {
    const controls = rendered.current;
    const current = requirements.current;
    if (controls === undefined || current === undefined) return;
    const { errors } = checkValues(current.requirements, (requirement) => {
      const control = controls.byKey.get(requirement.fieldKey);
      return control === undefined ? { raw: null } : control.read();
    });
    for (const control of controls.controls) {
      const message = errors.get(control.requirement.fieldKey);
      if (message === undefined) control.clearError();
      else control.showError(message);
    }
    setSummary(
      errors.size === 0
        ? "Every value passes the page's checks."
        : `${errors.size} field(s) would be refused.`,
    );
  };
  return (
    <section className="preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Live preview of the onboarding page</h2>
      <p className="hint">
        {props.fields.length === 0
          ? 'No active field: the page would not be shown.'
          : 'Type values and check them as the page would.'}
      </p>
      <div ref={host} className="preview-frame" data-testid="onboarding-preview" />
      <button type="button" className="secondary" onClick={check}>
        Check the values
      </button>
      <p role="status">{summary}</p>
    </section>
  );
}
