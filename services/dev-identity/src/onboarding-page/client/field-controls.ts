// One control per field type (spec 2.11), with its label, required marker, description,
// placeholder, help text (uiConfig.helpText) and width (uiConfig.width, spec 2.13). Every
// text from the gateway is set through textContent or attributes, never parsed as markup.

import type { FieldValue } from '@gateway/field-rules';
import type { RawInput } from './form-values.js';
import type { Requirement } from './requirements.js';

export type FieldControl = {
  requirement: Requirement;
  /** The `.field` wrapper, placed by the form. */
  element: HTMLElement;
  read(): RawInput;
  showError(message: string): void;
  clearError(): void;
  focus(): void;
};

/** Browser autofill hints for the canonical profile keys (spec 2.5). */
const autocompleteByProfileKey: Readonly<Record<string, string>> = {
  firstName: 'given-name',
  middleName: 'additional-name',
  lastName: 'family-name',
  nickname: 'nickname',
  phoneNumber: 'tel',
  dateOfBirth: 'bday',
  gender: 'sex',
  residenceCountryCode: 'country',
  preferredLocale: 'language',
};

/** Builds the control of `requirement`, showing `initial` (its currentValue, or what was typed). */
export function createFieldControl(
  doc: Document,
  requirement: Requirement,
  initial: FieldValue,
): FieldControl {
  switch (requirement.fieldType) {
    case 'BOOLEAN':
      return yesNoControl(doc, requirement, initial);
    case 'MULTI_SELECT':
      return checkboxesControl(doc, requirement, initial);
    case 'SELECT':
      return selectControl(doc, requirement, initial);
    case 'TEXTAREA':
      return singleControl(doc, requirement, initial, textareaOf(doc, requirement));
    default:
      return singleControl(doc, requirement, initial, inputOf(doc, requirement));
  }
}

type Parts = {
  element: HTMLElement;
  error: HTMLElement;
  /** Ids of the description, help and error paragraphs, for aria-describedby. */
  describedBy: string;
};

const idOf = (requirement: Requirement) => `field-${requirement.fieldKey}`;

function element<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attributes: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The wrapper (`div` with a `label`, or `fieldset` with a `legend` for a group of choices),
 * then description, `control`, help text and the error paragraph.
 */
function frame(
  doc: Document,
  requirement: Requirement,
  kind: 'single' | 'group',
  control: HTMLElement,
): Parts {
  const id = idOf(requirement);
  const wrapper = element(doc, kind === 'group' ? 'fieldset' : 'div', {
    class: `field ${requirement.uiConfig.width ?? 'full'}`,
    'data-field-key': requirement.fieldKey,
    'data-field-type': requirement.fieldType,
  });
  const caption =
    kind === 'group'
      ? element(doc, 'legend', { id: `${id}-label` })
      : element(doc, 'label', { id: `${id}-label`, for: id });
  caption.append(requirement.label);
  if (requirement.required) {
    caption.append(element(doc, 'span', { class: 'required', 'aria-hidden': 'true' }, '*'));
  }
  wrapper.append(caption);
  const describedBy: string[] = [];
  if (requirement.description !== null) {
    const description = element(doc, 'p', { class: 'description', id: `${id}-description` });
    description.textContent = requirement.description;
    wrapper.append(description);
    describedBy.push(description.id);
  }
  wrapper.append(control);
  if (requirement.uiConfig.helpText !== undefined) {
    const help = element(doc, 'p', { class: 'help', id: `${id}-help` });
    help.textContent = requirement.uiConfig.helpText;
    wrapper.append(help);
    describedBy.push(help.id);
  }
  const error = element(doc, 'p', { class: 'field-error', id: `${id}-error` });
  error.hidden = true;
  wrapper.append(error);
  describedBy.push(error.id);
  return { element: wrapper, error, describedBy: describedBy.join(' ') };
}

function errorHandlers(parts: Parts, invalidTargets: readonly HTMLElement[]) {
  return {
    showError(message: string) {
      parts.error.textContent = message;
      parts.error.hidden = false;
      for (const target of invalidTargets) target.setAttribute('aria-invalid', 'true');
    },
    clearError() {
      parts.error.textContent = '';
      parts.error.hidden = true;
      for (const target of invalidTargets) target.removeAttribute('aria-invalid');
    },
  };
}

const textOf = (value: FieldValue): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';

function inputOf(doc: Document, requirement: Requirement): HTMLInputElement {
  const input = element(doc, 'input', { id: idOf(requirement), name: requirement.fieldKey });
  const { validation } = requirement;
  switch (requirement.fieldType) {
    case 'NUMBER':
      input.type = 'number';
      input.step = 'any';
      if (validation.min !== undefined) input.min = String(validation.min);
      if (validation.max !== undefined) input.max = String(validation.max);
      break;
    case 'DATE':
      input.type = 'date';
      break;
    case 'PHONE':
      input.type = 'tel';
      input.setAttribute('autocomplete', 'tel');
      break;
    case 'EMAIL':
      input.type = 'email';
      input.setAttribute('autocomplete', 'email');
      break;
    case 'URL':
      input.type = 'url';
      input.setAttribute('autocomplete', 'url');
      break;
    case 'COUNTRY':
      // spec 2.11: uppercase ISO 3166-1 alpha-2; normalizeClientValue upper-cases.
      input.type = 'text';
      input.className = 'country';
      input.setAttribute('autocapitalize', 'characters');
      input.spellcheck = false;
      input.setAttribute('autocomplete', 'country');
      break;
    default:
      input.type = 'text';
  }
  const autocomplete = autocompleteByProfileKey[requirement.profileFieldKey ?? ''];
  if (autocomplete !== undefined) input.setAttribute('autocomplete', autocomplete);
  const placeholder =
    requirement.placeholder ?? (requirement.fieldType === 'COUNTRY' ? 'e.g. DE' : null);
  if (placeholder !== null) input.placeholder = placeholder;
  return input;
}

function textareaOf(doc: Document, requirement: Requirement): HTMLTextAreaElement {
  const textarea = element(doc, 'textarea', {
    id: idOf(requirement),
    name: requirement.fieldKey,
    rows: '4',
  });
  if (requirement.placeholder !== null) textarea.placeholder = requirement.placeholder;
  return textarea;
}

/** One input or textarea: every type but BOOLEAN, SELECT and MULTI_SELECT. */
function singleControl(
  doc: Document,
  requirement: Requirement,
  initial: FieldValue,
  input: HTMLInputElement | HTMLTextAreaElement,
): FieldControl {
  input.value = textOf(initial);
  if (requirement.required) input.setAttribute('aria-required', 'true');
  const parts = frame(doc, requirement, 'single', input);
  input.setAttribute('aria-describedby', parts.describedBy);
  return {
    requirement,
    element: parts.element,
    read: () => ({
      raw: input.value,
      unparsable: input instanceof HTMLInputElement && input.validity.badInput,
    }),
    ...errorHandlers(parts, [input]),
    focus: () => input.focus(),
  };
}

function selectControl(doc: Document, requirement: Requirement, initial: FieldValue): FieldControl {
  const select = element(doc, 'select', { id: idOf(requirement), name: requirement.fieldKey });
  const autocomplete = autocompleteByProfileKey[requirement.profileFieldKey ?? ''];
  if (autocomplete !== undefined) select.setAttribute('autocomplete', autocomplete);
  select.append(element(doc, 'option', { value: '' }, requirement.placeholder ?? 'Choose…'));
  for (const option of requirement.options) {
    select.append(element(doc, 'option', { value: option.value }, option.label));
  }
  const chosen = textOf(initial);
  select.value = requirement.options.some((option) => option.value === chosen) ? chosen : '';
  if (requirement.required) select.setAttribute('aria-required', 'true');
  const parts = frame(doc, requirement, 'single', select);
  select.setAttribute('aria-describedby', parts.describedBy);
  return {
    requirement,
    element: parts.element,
    read: () => ({ raw: select.value }),
    ...errorHandlers(parts, [select]),
    focus: () => select.focus(),
  };
}

function choice(doc: Document, input: HTMLInputElement, text: string): HTMLLabelElement {
  const label = element(doc, 'label', { class: 'choice', for: input.id });
  label.append(input, element(doc, 'span', {}, text));
  return label;
}

/** BOOLEAN as a Yes/No choice: a required BOOLEAN is satisfied by either answer (spec 2.11). */
function yesNoControl(doc: Document, requirement: Requirement, initial: FieldValue): FieldControl {
  const id = idOf(requirement);
  const radio = (answer: 'yes' | 'no') => {
    const input = element(doc, 'input', {
      type: 'radio',
      id: `${id}-${answer}`,
      name: requirement.fieldKey,
      value: answer,
    });
    input.checked = initial === (answer === 'yes');
    return input;
  };
  const yes = radio('yes');
  const no = radio('no');
  const choices = element(doc, 'div', { class: 'choices-inline' });
  choices.append(choice(doc, yes, 'Yes'), choice(doc, no, 'No'));
  const parts = frame(doc, requirement, 'group', choices);
  parts.element.setAttribute('role', 'radiogroup');
  parts.element.setAttribute('aria-labelledby', `${id}-label`);
  parts.element.setAttribute('aria-describedby', parts.describedBy);
  if (requirement.required) parts.element.setAttribute('aria-required', 'true');
  return {
    requirement,
    element: parts.element,
    read: () => ({ raw: yes.checked ? true : no.checked ? false : null }),
    ...errorHandlers(parts, [parts.element]),
    focus: () => (no.checked ? no : yes).focus(),
  };
}

/** MULTI_SELECT as one checkbox per option. */
function checkboxesControl(
  doc: Document,
  requirement: Requirement,
  initial: FieldValue,
): FieldControl {
  const id = idOf(requirement);
  const selected = new Set(Array.isArray(initial) ? initial : []);
  const boxes = requirement.options.map((option, index) => {
    const input = element(doc, 'input', {
      type: 'checkbox',
      id: `${id}-option-${index}`,
      name: requirement.fieldKey,
      value: option.value,
    });
    input.checked = selected.has(option.value);
    return { input, label: option.label };
  });
  const list = element(doc, 'div', { class: 'choices' });
  list.append(...boxes.map((box) => choice(doc, box.input, box.label)));
  const parts = frame(doc, requirement, 'group', list);
  parts.element.setAttribute('aria-describedby', parts.describedBy);
  return {
    requirement,
    element: parts.element,
    read: () => ({ raw: boxes.filter((box) => box.input.checked).map((box) => box.input.value) }),
    ...errorHandlers(parts, [parts.element]),
    focus: () => boxes[0]?.input.focus(),
  };
}
