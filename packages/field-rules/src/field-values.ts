// Value rules (spec 2.11, 2.12, 2.14): the built-in type rule of each field type, then the
// validation object; emptiness and required-field evaluation; render order.

import type { FieldType } from './field-types.js';
import { isStringFieldType } from './field-types.js';
import type { FieldOption, FieldValidation } from './field-definition.js';
import { codePointLength } from './plain-text.js';
import { safePattern } from './safe-pattern.js';
import { isStorableText, STORED_TEXT_MESSAGE } from './stored-text.js';

/** What value validation needs to know about a field. */
export type FieldValueRules = {
  fieldType: FieldType;
  options?: readonly FieldOption[];
  validation?: FieldValidation;
};

/** A value in canonical form: `null` (or `[]` for MULTI_SELECT) when empty. */
export type FieldValue = string | number | boolean | string[] | null;

export type FieldValueResult = { ok: true; value: FieldValue } | { ok: false; message: string };

const accept = (value: FieldValue): FieldValueResult => ({ ok: true, value });
const reject = (message: string): FieldValueResult => ({ ok: false, message });

export const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
export const COUNTRY_PATTERN = /^[A-Z]{2}$/;
export const PHONE_PATTERN = /^\+[1-9][0-9]{6,14}$/;

// Local part: dot-atom of RFC 5322 (no quoted strings); domain: at least two LDH labels with
// an alphabetic top-level label. ASCII only; length limits of RFC 5321.
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A reasonable e-mail address: `local@domain.tld`, ASCII, at most 254 characters. */
export function isEmailAddress(text: string): boolean {
  if (text.length > 254) return false;
  const at = text.lastIndexOf('@');
  if (at < 1) return false;
  const local = text.slice(0, at);
  const labels = text.slice(at + 1).split('.');
  const tld = labels[labels.length - 1] ?? '';
  return (
    local.length <= 64 &&
    EMAIL_LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => DOMAIN_LABEL.test(label)) &&
    /^[A-Za-z]{2,63}$/.test(tld)
  );
}

/** An absolute http(s) URL with a host, no whitespace and no user name or password. */
export function isHttpUrl(text: string): boolean {
  if (/\s/.test(text) || !/^https?:\/\//i.test(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  const authority = text.replace(/^https?:\/\//i, '').split(/[/?#]/, 1)[0] ?? '';
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    !authority.includes('@')
  );
}

const isLeapYear = (year: number): boolean =>
  (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `YYYY-MM-DD` naming a real day of the (proleptic Gregorian) calendar, years 0001-9999. */
export function isCalendarDate(text: string): boolean {
  const match = DATE_PATTERN.exec(text);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return day <= days;
}

/**
 * Whether `value` counts as empty for the field: `null`/`undefined`, a blank string, or an
 * empty array. Any boolean is an answer — a required BOOLEAN is satisfied by `false` as well
 * as `true` (spec 2.11) — and so is the number 0.
 */
export function isEmptyValue(
  _definition: Pick<FieldValueRules, 'fieldType'>,
  value: unknown,
): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

const emptyValue = (fieldType: FieldType): FieldValue => (fieldType === 'MULTI_SELECT' ? [] : null);

function optionValues(definition: FieldValueRules): Set<string> {
  return new Set((definition.options ?? []).map((option) => option.value));
}

/** The built-in rule of the field type (spec 2.11). */
function checkType(definition: FieldValueRules, value: unknown): FieldValueResult {
  switch (definition.fieldType) {
    case 'TEXT':
    case 'TEXTAREA':
      if (typeof value !== 'string') return reject('must be a string');
      return isStorableText(value) ? accept(value) : reject(STORED_TEXT_MESSAGE);
    case 'NUMBER':
      return typeof value === 'number' && Number.isFinite(value)
        ? accept(value)
        : reject('must be a finite number');
    case 'BOOLEAN':
      return typeof value === 'boolean' ? accept(value) : reject('must be true or false');
    case 'DATE':
      return typeof value === 'string' && isCalendarDate(value)
        ? accept(value)
        : reject('must be a real calendar date written YYYY-MM-DD');
    case 'SELECT':
      return typeof value === 'string' && optionValues(definition).has(value)
        ? accept(value)
        : reject('must be one of the option values');
    case 'MULTI_SELECT': {
      if (!Array.isArray(value)) return reject('must be an array of option values');
      const allowed = optionValues(definition);
      const seen = new Set<string>();
      for (const item of value) {
        if (typeof item !== 'string' || !allowed.has(item)) {
          return reject('must contain only option values');
        }
        if (seen.has(item)) return reject('must not repeat an option value');
        seen.add(item);
      }
      return accept([...seen]);
    }
    case 'COUNTRY':
      return typeof value === 'string' && COUNTRY_PATTERN.test(value)
        ? accept(value)
        : reject('must be an uppercase ISO 3166-1 alpha-2 country code');
    case 'PHONE':
      return typeof value === 'string' && PHONE_PATTERN.test(value)
        ? accept(value)
        : reject('must be an E.164 phone number: + then 7 to 15 digits');
    case 'EMAIL':
      return typeof value === 'string' && isEmailAddress(value)
        ? accept(value)
        : reject('must be an e-mail address');
    case 'URL':
      return typeof value === 'string' && isHttpUrl(value)
        ? accept(value)
        : reject('must be an absolute http:// or https:// URL');
  }
}

/** The validation object (spec 2.12), after the type rule has passed. */
function checkValidation(definition: FieldValueRules, value: FieldValue): FieldValueResult {
  const validation = definition.validation ?? {};
  if (typeof value === 'string' && isStringFieldType(definition.fieldType)) {
    const length = codePointLength(value);
    if (validation.minLength !== undefined && length < validation.minLength) {
      return reject(`must be at least ${validation.minLength} characters`);
    }
    if (validation.maxLength !== undefined && length > validation.maxLength) {
      return reject(`must be at most ${validation.maxLength} characters`);
    }
    if (validation.pattern !== undefined) {
      const check = safePattern(validation.pattern);
      // A stored pattern that fails the check (older data) rejects rather than runs.
      if (!check.ok) return reject('cannot be checked: the field has an invalid pattern');
      if (!check.regex.test(value)) return reject('does not have the required format');
    }
  }
  if (typeof value === 'number' && definition.fieldType === 'NUMBER') {
    if (validation.min !== undefined && value < validation.min) {
      return reject(`must be at least ${validation.min}`);
    }
    if (validation.max !== undefined && value > validation.max) {
      return reject(`must be at most ${validation.max}`);
    }
  }
  return accept(value);
}

/**
 * Validates a submitted value: `null` (or any empty value, see isEmptyValue) is accepted as
 * "no value" and comes back as `null` (`[]` for MULTI_SELECT) — whether the field is required
 * is decided by missingRequiredFields. Otherwise the built-in type rule applies first, then
 * the validation object. Values are not rewritten: run normalizeClientValue first to accept
 * what a form produces. Messages never contain the value.
 */
export function validateFieldValue(definition: FieldValueRules, value: unknown): FieldValueResult {
  if (isEmptyValue(definition, value)) return accept(emptyValue(definition.fieldType));
  const typed = checkType(definition, value);
  return typed.ok ? checkValidation(definition, typed.value) : typed;
}

/** A field as completion sees it. A definition without `active` counts as active. */
export type RequirementField = FieldValueRules & {
  fieldKey: string;
  required: boolean;
  active?: boolean;
};

/**
 * The keys of active required fields without a non-empty valid value (spec 2.10: "completion
 * fails until a non-empty valid value exists"), in the order of `definitions` (the caller
 * puts global fields first and sorts each group with sortFieldDefinitions).
 */
export function missingRequiredFields(
  definitions: readonly RequirementField[],
  values: Readonly<Record<string, unknown>>,
): string[] {
  // Own properties only: a field key such as `constructor` must not read Object.prototype.
  const read = (key: string): unknown => (Object.hasOwn(values, key) ? values[key] : undefined);
  return definitions
    .filter((definition) => definition.required && definition.active !== false)
    .filter((definition) => {
      const value = read(definition.fieldKey);
      return isEmptyValue(definition, value) || !validateFieldValue(definition, value).ok;
    })
    .map((definition) => definition.fieldKey);
}

export type SortableField = { sortOrder: number; createdAt: Date | string; fieldKey?: string };

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const time = (value: Date | string): number =>
  value instanceof Date ? value.getTime() : Date.parse(value);

/**
 * Render order (spec 2.10): ascending `sortOrder`, ties by creation time, then by `fieldKey`
 * so the order is stable. Returns a new array.
 */
export function sortFieldDefinitions<T extends SortableField>(definitions: readonly T[]): T[] {
  return [...definitions].sort(
    (a, b) =>
      a.sortOrder - b.sortOrder ||
      time(a.createdAt) - time(b.createdAt) ||
      compareText(a.fieldKey ?? '', b.fieldKey ?? ''),
  );
}
