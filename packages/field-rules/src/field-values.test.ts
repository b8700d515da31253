import { describe, expect, it } from '@jest/globals';
import {
  isCalendarDate,
  isEmptyValue,
  missingRequiredFields,
  sortFieldDefinitions,
  validateFieldValue,
} from './field-values.js';
import type { FieldValueRules, RequirementField } from './field-values.js';
import type { FieldType } from './field-types.js';

const field = (fieldType: FieldType, more: Partial<FieldValueRules> = {}): FieldValueRules => ({
  fieldType,
  options: [],
  validation: {},
  ...more,
});
const options = [
  { value: 'red', label: 'Red' },
  { value: 'blue', label: 'Blue' },
  { value: 'green', label: 'Green' },
];

const ok = (definition: FieldValueRules, value: unknown): boolean =>
  validateFieldValue(definition, value).ok;

/** Accepted and rejected values of each type's built-in rule (spec 2.11). */
const TYPE_CASES: [FieldType, unknown[], unknown[]][] = [
  ['TEXT', ['x', ' padded ', 'Zoë 😀', 'a\nb'], [1, true, ['x'], {}]],
  ['TEXTAREA', ['line 1\nline 2'], [1, false]],
  ['NUMBER', [0, -1.5, 42, 1e21], ['42', NaN, Infinity, -Infinity, true]],
  ['BOOLEAN', [true, false], ['true', 0, 1, 'false']],
  [
    'DATE',
    ['2024-02-29', '2023-12-31', '2000-02-29', '0001-01-01'],
    [
      '2023-02-29',
      '2023-02-30',
      '1900-02-29',
      '2023-04-31',
      '2023-13-01',
      '2023-00-10',
      '2023-01-00',
      '0000-01-01',
      '2023-1-5',
      '20230105',
      '2023-01-05T00:00:00Z',
      20230105,
    ],
  ],
  ['COUNTRY', ['DE', 'US'], ['de', 'DEU', 'D', 'D1', 1]],
  [
    'PHONE',
    ['+4915112345678', '+1234567', '+123456789012345'],
    [
      '+0123456789',
      '4915112345678',
      '+49 151 1234',
      '+123456',
      '+1234567890123456',
      '+49-151',
      4915112345678,
    ],
  ],
  [
    'EMAIL',
    ['user@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.org"],
    [
      'user',
      'user@',
      '@example.com',
      'user@example',
      'user@@example.com',
      'user @example.com',
      '.user@example.com',
      'us..er@example.com',
      'user@-example.com',
      'user@example.c0m',
      'a'.repeat(65) + '@example.com',
      5,
    ],
  ],
  [
    'URL',
    ['https://example.com', 'http://example.com/path?q=1#x', 'HTTPS://EXAMPLE.COM'],
    [
      'ftp://example.com',
      'example.com',
      '/relative',
      'javascript:alert(1)',
      'https://',
      'https://user:pw@example.com',
      'https://@example.com',
      'https://exa mple.com',
      'mailto:a@example.com',
      7,
    ],
  ],
];

describe('validateFieldValue: built-in type rules', () => {
  for (const [fieldType, good, bad] of TYPE_CASES) {
    it.each(good.map((value) => [value]))(`${fieldType} accepts %j`, (value) => {
      expect(validateFieldValue(field(fieldType), value)).toEqual({ ok: true, value });
    });
    it.each(bad.map((value) => [value]))(`${fieldType} rejects %j`, (value) => {
      const result = validateFieldValue(field(fieldType), value);
      expect(result.ok).toBe(false);
    });
  }

  it('SELECT accepts exactly one option value', () => {
    const select = field('SELECT', { options });
    expect(validateFieldValue(select, 'red')).toEqual({ ok: true, value: 'red' });
    expect(validateFieldValue(select, 'Red')).toEqual({
      ok: false,
      message: 'must be one of the option values',
    });
    expect(ok(select, ['red'])).toBe(false);
    expect(ok(select, 'purple')).toBe(false);
  });

  it('MULTI_SELECT accepts an array of distinct option values', () => {
    const multi = field('MULTI_SELECT', { options });
    expect(validateFieldValue(multi, ['red', 'green'])).toEqual({
      ok: true,
      value: ['red', 'green'],
    });
    expect(validateFieldValue(multi, ['red', 'red'])).toEqual({
      ok: false,
      message: 'must not repeat an option value',
    });
    expect(ok(multi, ['red', 'purple'])).toBe(false);
    expect(ok(multi, 'red')).toBe(false);
    expect(ok(multi, [1])).toBe(false);
  });

  it('gives messages without the value', () => {
    const result = validateFieldValue(field('EMAIL'), 'secret-value');
    expect(result).toEqual({ ok: false, message: 'must be an e-mail address' });
  });
});

describe('validateFieldValue: empty values', () => {
  it.each([null, undefined, '', '   '])('accepts %j as no value (null)', (value) => {
    for (const fieldType of ['TEXT', 'NUMBER', 'BOOLEAN', 'DATE', 'SELECT', 'URL'] as const) {
      expect(validateFieldValue(field(fieldType), value)).toEqual({ ok: true, value: null });
    }
  });

  it('gives [] as the empty MULTI_SELECT', () => {
    expect(validateFieldValue(field('MULTI_SELECT', { options }), null)).toEqual({
      ok: true,
      value: [],
    });
    expect(validateFieldValue(field('MULTI_SELECT', { options }), [])).toEqual({
      ok: true,
      value: [],
    });
  });

  it('does not apply the validation object to an empty value', () => {
    expect(ok(field('TEXT', { validation: { minLength: 3, pattern: '^x+$' } }), null)).toBe(true);
  });
});

describe('validateFieldValue: validation object', () => {
  it('counts minLength and maxLength in code points', () => {
    const text = field('TEXT', { validation: { minLength: 2, maxLength: 3 } });
    expect(ok(text, 'ab')).toBe(true);
    expect(ok(text, 'abc')).toBe(true);
    expect(ok(text, '😀😀😀')).toBe(true);
    expect(validateFieldValue(text, 'a')).toEqual({
      ok: false,
      message: 'must be at least 2 characters',
    });
    expect(validateFieldValue(text, 'abcd')).toEqual({
      ok: false,
      message: 'must be at most 3 characters',
    });
  });

  it('tests the pattern against the whole value with the u flag', () => {
    const zip = field('TEXT', { validation: { pattern: '^\\d{5}(-\\d{4})?$' } });
    expect(ok(zip, '12345')).toBe(true);
    expect(ok(zip, '12345-6789')).toBe(true);
    expect(validateFieldValue(zip, '1234')).toEqual({
      ok: false,
      message: 'does not have the required format',
    });
    const unanchored = field('TEXT', { validation: { pattern: '[0-9]+' } });
    expect(ok(unanchored, '123')).toBe(true);
    expect(ok(unanchored, 'abc123')).toBe(false);
    const letters = field('TEXT', { validation: { pattern: '\\p{L}+' } });
    expect(ok(letters, 'Zoë')).toBe(true);
    const alternation = field('TEXT', { validation: { pattern: 'DE|AT' } });
    expect(ok(alternation, 'DEX')).toBe(false);
  });

  it('applies string rules to other string types after their own rule', () => {
    const german = field('PHONE', { validation: { pattern: '^\\+49[0-9]+$' } });
    expect(ok(german, '+4915112345678')).toBe(true);
    expect(ok(german, '+3315112345678')).toBe(false);
    const dach = field('COUNTRY', { validation: { pattern: 'DE|AT|CH' } });
    expect(ok(dach, 'AT')).toBe(true);
    expect(ok(dach, 'FR')).toBe(false);
  });

  it('rejects rather than runs an unsafe stored pattern', () => {
    const unsafe = field('TEXT', { validation: { pattern: '(a+)+$' } });
    expect(validateFieldValue(unsafe, 'a'.repeat(40) + '!')).toEqual({
      ok: false,
      message: 'cannot be checked: the field has an invalid pattern',
    });
  });

  it('checks min and max of NUMBER', () => {
    const age = field('NUMBER', { validation: { min: 18, max: 130 } });
    expect(ok(age, 18)).toBe(true);
    expect(ok(age, 130)).toBe(true);
    expect(validateFieldValue(age, 17.9)).toEqual({ ok: false, message: 'must be at least 18' });
    expect(validateFieldValue(age, 131)).toEqual({ ok: false, message: 'must be at most 130' });
  });
});

describe('isCalendarDate', () => {
  it('knows leap years', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2000-02-29')).toBe(true);
    expect(isCalendarDate('2100-02-29')).toBe(false);
    expect(isCalendarDate('2023-02-28')).toBe(true);
    expect(isCalendarDate('2023-02-30')).toBe(false);
  });
});

describe('isEmptyValue', () => {
  it.each([null, undefined, '', '  ', []])('%j is empty', (value) => {
    expect(isEmptyValue({ fieldType: 'TEXT' }, value)).toBe(true);
  });

  it('treats false and 0 as answers', () => {
    expect(isEmptyValue({ fieldType: 'BOOLEAN' }, false)).toBe(false);
    expect(isEmptyValue({ fieldType: 'BOOLEAN' }, true)).toBe(false);
    expect(isEmptyValue({ fieldType: 'BOOLEAN' }, null)).toBe(true);
    expect(isEmptyValue({ fieldType: 'NUMBER' }, 0)).toBe(false);
    expect(isEmptyValue({ fieldType: 'MULTI_SELECT' }, ['a'])).toBe(false);
  });
});

describe('missingRequiredFields', () => {
  const required = (fieldKey: string, fieldType: FieldType, more: Partial<RequirementField> = {}) =>
    ({
      fieldKey,
      fieldType,
      required: true,
      options: [],
      validation: {},
      ...more,
    }) as RequirementField;

  it('is satisfied by either answer of a required BOOLEAN', () => {
    const terms = [required('acceptTerms', 'BOOLEAN')];
    expect(missingRequiredFields(terms, { acceptTerms: false })).toEqual([]);
    expect(missingRequiredFields(terms, { acceptTerms: true })).toEqual([]);
    expect(missingRequiredFields(terms, { acceptTerms: null })).toEqual(['acceptTerms']);
    expect(missingRequiredFields(terms, {})).toEqual(['acceptTerms']);
  });

  it('lists empty and invalid required fields in the given order', () => {
    const definitions = [
      required('firstName', 'TEXT'),
      required('dateOfBirth', 'DATE'),
      required('teams', 'MULTI_SELECT', { options }),
      required('nickname', 'TEXT', { required: false }),
      required('archived', 'TEXT', { active: false }),
      required('age', 'NUMBER'),
    ];
    expect(
      missingRequiredFields(definitions, {
        firstName: '  ',
        dateOfBirth: '2023-02-30',
        teams: [],
        age: 0,
      }),
    ).toEqual(['firstName', 'dateOfBirth', 'teams']);
    expect(
      missingRequiredFields(definitions, {
        firstName: 'Ada',
        dateOfBirth: '1815-12-10',
        teams: ['red'],
        age: 36,
      }),
    ).toEqual([]);
  });

  it('reads own properties only', () => {
    expect(missingRequiredFields([required('constructor', 'TEXT')], {})).toEqual(['constructor']);
  });
});

describe('sortFieldDefinitions', () => {
  it('orders by sortOrder, then creation time, then field key, without mutating', () => {
    const input = [
      { fieldKey: 'c', sortOrder: 1, createdAt: '2024-01-02T00:00:00Z' },
      { fieldKey: 'b', sortOrder: 1, createdAt: new Date('2024-01-01T00:00:00Z') },
      { fieldKey: 'a', sortOrder: 2, createdAt: '2023-01-01T00:00:00Z' },
      { fieldKey: 'z', sortOrder: -1, createdAt: '2025-01-01T00:00:00Z' },
      { fieldKey: 'y', sortOrder: 1, createdAt: '2024-01-02T00:00:00Z' },
    ];
    const sorted = sortFieldDefinitions(input);
    expect(sorted.map((definition) => definition.fieldKey)).toEqual(['z', 'b', 'c', 'y', 'a']);
    expect(input[0]?.fieldKey).toBe('c');
  });
});
