// Client value normalisation (spec 4.9), run by the identity UI before it validates and
// sends values, and usable by a server that wants to accept the same form input.

import type { FieldType } from './field-types.js';

/** Separators removed from phone numbers: whitespace, dashes, dots and brackets. */
export const PHONE_SEPARATORS = /[\s\-.()[\]]/g;

// A decimal number as typed in a form (no hex, no `Infinity`, no empty string).
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Normalises a raw form value for a field: text is trimmed, an empty scalar becomes `null`,
 * an empty MULTI_SELECT becomes `[]`, phone separators (spaces, dashes, dots, brackets) are
 * removed and country codes are upper-cased. NUMBER fields also accept a decimal string and
 * turn it into a number. Values of the wrong kind are returned unchanged (trimmed when text),
 * for validateFieldValue to reject.
 */
export function normalizeClientValue(definition: { fieldType: FieldType }, raw: unknown): unknown {
  const { fieldType } = definition;
  if (fieldType === 'MULTI_SELECT') {
    if (raw === null || raw === undefined || (typeof raw === 'string' && raw.trim() === '')) {
      return [];
    }
    if (!Array.isArray(raw)) return raw;
    return raw
      .map((item: unknown) => (typeof item === 'string' ? item.trim() : item))
      .filter((item) => item !== '');
  }
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== 'string') return raw;
  const text = raw.trim();
  if (text === '') return null;
  switch (fieldType) {
    case 'PHONE':
      return text.replace(PHONE_SEPARATORS, '');
    case 'COUNTRY':
      return text.toUpperCase();
    case 'NUMBER':
      return DECIMAL.test(text) ? Number(text) : text;
    default:
      return text;
  }
}
