// The fields of the form, grouped under their uiConfig.section headings (spec 2.13) in the
// order the gateway sent them (global fields first, spec 2.14). A section appears once, where
// its first field is; a run of fields without a section forms a group without a heading.

import type { FieldValue } from '@gateway/field-rules';
import { createFieldControl, type FieldControl } from './field-controls.js';
import type { Requirement } from './requirements.js';

export type RenderedFields = {
  /** In render order. */
  controls: FieldControl[];
  byKey: ReadonlyMap<string, FieldControl>;
};

/** Replaces the content of `container` with the controls of `requirements`. */
export function renderFields(
  container: HTMLElement,
  requirements: readonly Requirement[],
  initialValue: (requirement: Requirement) => FieldValue,
): RenderedFields {
  const doc = container.ownerDocument;
  const sections = new Map<string, HTMLElement>();
  let unsectioned: HTMLElement | undefined;
  const groupOf = (section: string | undefined): HTMLElement => {
    const existing = section === undefined ? unsectioned : sections.get(section);
    if (existing !== undefined) return existing;
    const grid = doc.createElement('div');
    grid.className = 'section';
    if (section === undefined) {
      container.append(grid);
      unsectioned = grid;
    } else {
      const wrapper = doc.createElement('section');
      const heading = doc.createElement('h2');
      heading.textContent = section;
      wrapper.append(heading, grid);
      container.append(wrapper);
      sections.set(section, grid);
      unsectioned = undefined;
    }
    return grid;
  };

  container.replaceChildren();
  const controls = requirements.map((requirement) => {
    const control = createFieldControl(doc, requirement, initialValue(requirement));
    groupOf(requirement.uiConfig.section).append(control.element);
    return control;
  });
  return {
    controls,
    byKey: new Map(controls.map((control) => [control.requirement.fieldKey, control])),
  };
}
