// What the page sends (spec 4.9): every value normalised with normalizeClientValue (text
// trimmed, empty scalars null, empty multi-select [], phone separators removed, country
// upper-cased), then checked with the gateway's own rules (validateFieldValue) and, for
// required fields, for emptiness: a bad value never leaves the browser.

import {
  isEmptyValue,
  normalizeClientValue,
  validateFieldValue,
  type FieldValue,
} from '@gateway/field-rules';
import type { Requirement } from './requirements.js';

/** What a control holds: a string, a list of strings, a boolean or null. */
export type RawValue = string | string[] | boolean | null;

/** A control's value as the browser has it; `unparsable` when a number input holds text. */
export type RawInput = { raw: RawValue; unparsable?: boolean };

export type CheckedValues = {
  /** Every field's normalised value, keyed by field key. */
  values: Record<string, FieldValue>;
  /** Field key to the message shown next to the field; empty when all values are fine. */
  errors: Map<string, string>;
};

export const requiredMessage = 'This field is required.';

export function checkValues(
  requirements: readonly Requirement[],
  read: (requirement: Requirement) => RawInput,
): CheckedValues {
  const values: Record<string, FieldValue> = {};
  const errors = new Map<string, string>();
  for (const requirement of requirements) {
    const input = read(requirement);
    if (input.unparsable === true) {
      errors.set(requirement.fieldKey, 'Enter a number.');
      continue;
    }
    const normalized = normalizeClientValue(requirement, input.raw);
    const result = validateFieldValue(requirement, normalized);
    if (!result.ok) {
      errors.set(requirement.fieldKey, sentence(result.message));
      continue;
    }
    if (requirement.required && isEmptyValue(requirement, result.value)) {
      errors.set(requirement.fieldKey, requiredMessage);
    }
    values[requirement.fieldKey] = result.value;
  }
  return { values, errors };
}

/** `must be an e-mail address` → `Must be an e-mail address.` */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
