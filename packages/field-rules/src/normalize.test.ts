import { describe, expect, it } from '@jest/globals';
import { normalizeClientValue } from './normalize.js';
import type { FieldType } from './field-types.js';

const normalize = (fieldType: FieldType, raw: unknown): unknown =>
  normalizeClientValue({ fieldType }, raw);

describe('normalizeClientValue (spec 4.9)', () => {
  it('trims text', () => {
    expect(normalize('TEXT', '  Ada  ')).toBe('Ada');
    expect(normalize('TEXTAREA', '\n line 1\nline 2 \n')).toBe('line 1\nline 2');
    expect(normalize('EMAIL', ' ada@example.com ')).toBe('ada@example.com');
    expect(normalize('URL', ' https://example.com ')).toBe('https://example.com');
    expect(normalize('DATE', ' 2024-02-29 ')).toBe('2024-02-29');
    expect(normalize('SELECT', ' red ')).toBe('red');
  });

  it.each([
    'TEXT',
    'TEXTAREA',
    'NUMBER',
    'BOOLEAN',
    'DATE',
    'SELECT',
    'COUNTRY',
    'PHONE',
    'EMAIL',
    'URL',
  ] as const)('sends an empty %s as null', (fieldType) => {
    expect(normalize(fieldType, '')).toBeNull();
    expect(normalize(fieldType, '   ')).toBeNull();
    expect(normalize(fieldType, null)).toBeNull();
    expect(normalize(fieldType, undefined)).toBeNull();
  });

  it('sends an empty MULTI_SELECT as []', () => {
    expect(normalize('MULTI_SELECT', [])).toEqual([]);
    expect(normalize('MULTI_SELECT', null)).toEqual([]);
    expect(normalize('MULTI_SELECT', undefined)).toEqual([]);
    expect(normalize('MULTI_SELECT', '')).toEqual([]);
    expect(normalize('MULTI_SELECT', [' red ', '', 'blue'])).toEqual(['red', 'blue']);
  });

  it('removes phone separators: spaces, dashes, dots and brackets', () => {
    expect(normalize('PHONE', ' +49 (151) 123-45.678 ')).toBe('+4915112345678');
    expect(normalize('PHONE', '+1 [555] 010\u00a00000')).toBe('+15550100000');
    expect(normalize('PHONE', '+44\t20 7946 0958')).toBe('+442079460958');
  });

  it('upper-cases country codes', () => {
    expect(normalize('COUNTRY', ' de ')).toBe('DE');
    expect(normalize('COUNTRY', 'Us')).toBe('US');
  });

  it('keeps booleans (false is an answer) and numbers, and reads decimal strings', () => {
    expect(normalize('BOOLEAN', false)).toBe(false);
    expect(normalize('BOOLEAN', true)).toBe(true);
    expect(normalize('NUMBER', 0)).toBe(0);
    expect(normalize('NUMBER', ' 42 ')).toBe(42);
    expect(normalize('NUMBER', '-1.5e2')).toBe(-150);
    expect(normalize('NUMBER', '0x10')).toBe('0x10');
    expect(normalize('NUMBER', 'Infinity')).toBe('Infinity');
  });

  it('leaves values of the wrong kind for validation to reject', () => {
    expect(normalize('TEXT', 5)).toBe(5);
    expect(normalize('MULTI_SELECT', 'red')).toBe('red');
    expect(normalize('MULTI_SELECT', [1, ' a '])).toEqual([1, 'a']);
  });
});
