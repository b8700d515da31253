import { describe, expect, it } from '@jest/globals';
import { checkSafePattern, safePattern } from './safe-pattern.js';

// Known ReDoS patterns (exponential backtracking), from the OWASP ReDoS page, CVE reports and
// the regex literature. Every one compiles with the `u` flag, so it is the safety rule, not
// the compiler, that must reject it.
const REDOS_CORPUS = [
  '(a+)+$',
  '(a+)+',
  '(a*)*',
  '(a|a)*',
  '(a|aa)+',
  '(a|a?)+',
  '(.*a){12}',
  '(\\w+\\s?)*',
  '^(\\w+\\s?)*$',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$',
  '^(([a-zA-Z0-9])+)+$',
  '(x+x+)+y',
  '(aa?)+b',
  '^(a{1,5})+$',
  '(?:a+)+',
  '(?<word>\\d+)*x',
  '((ab)*)+c',
  '(\\d|\\d\\d)+z',
  '^(\\s*,\\s*)*$',
  '((a+)?)+b',
  '(?:(?:a)|b)+',
];

const BACKREFERENCES = ['(a)\\1', '(a*)\\1+b', '(?<x>a)\\k<x>'];
const LOOKBEHIND = ['(?<=a)b', '(?<!a)b', 'x(?<=\\d+)'];

const ORDINARY = [
  '^[A-Z]{2}[0-9]+$',
  '^\\d{5}(-\\d{4})?$',
  '[a-z]+',
  '^\\p{L}+$',
  '^\\p{Lu}\\p{Ll}*(?: \\p{Lu}\\p{Ll}*)?$',
  '^(\\d{3}-){2}\\d{4}$',
  '^([a-z]-)+[a-z]$',
  '^(?:DE|AT|CH)$',
  '^(?=.*\\d)(?=.*[a-z]).{8,}$',
  '^[^@\\s]+@[^@\\s]+$',
  '^\\u{1F600}?[a-z]*$',
  '^(?<zip>\\d{5})$',
  '^[\\]\\[()+*]+$',
  '^a{2}(?:bc){3}$',
  '^\\+49[0-9]+$',
];

describe('checkSafePattern', () => {
  it.each(REDOS_CORPUS)('rejects the ReDoS pattern %s', (pattern) => {
    expect(() => new RegExp(pattern, 'u')).not.toThrow();
    const check = checkSafePattern(pattern);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toMatch(/must not repeat a group/);
  });

  it.each(BACKREFERENCES)('rejects the backreference in %s', (pattern) => {
    expect(checkSafePattern(pattern)).toEqual({
      ok: false,
      message: 'must not use backreferences',
    });
  });

  it.each(LOOKBEHIND)('rejects the lookbehind in %s', (pattern) => {
    expect(checkSafePattern(pattern)).toEqual({ ok: false, message: 'must not use lookbehind' });
  });

  it.each(ORDINARY)('accepts the ordinary pattern %s', (pattern) => {
    expect(checkSafePattern(pattern).ok).toBe(true);
  });

  it.each(['(', '[a-', 'a{2', '\\q', '(?<a)', '*a', 'a**'])(
    'rejects %s, which does not compile with the u flag',
    (pattern) => {
      expect(checkSafePattern(pattern)).toEqual({
        ok: false,
        message: 'must be a valid regular expression (with the `u` flag)',
      });
    },
  );

  it('limits the pattern to 500 characters', () => {
    expect(checkSafePattern('a'.repeat(500)).ok).toBe(true);
    expect(checkSafePattern('a'.repeat(501))).toEqual({
      ok: false,
      message: 'must be at most 500 characters',
    });
  });

  it('returns a regex anchored to the whole value, with the u flag', () => {
    const check = checkSafePattern('a|b');
    if (!check.ok) throw new Error(check.message);
    expect(check.regex.flags).toBe('u');
    expect(check.regex.test('a')).toBe(true);
    expect(check.regex.test('ab')).toBe(false);
    expect(check.regex.test('xa')).toBe(false);
  });

  it('caches checks in safePattern', () => {
    expect(safePattern('^x$')).toBe(safePattern('^x$'));
    expect(safePattern('(a+)+').ok).toBe(false);
  });
});
