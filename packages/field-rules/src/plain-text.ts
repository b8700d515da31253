// Text sizes and the "no HTML" rule for admin-authored display text (spec 2.10, 2.11, 2.13, 8).

/**
 * The "no HTML" rule: a text is rejected when it contains `<` directly followed by an ASCII
 * letter, `/`, `!` or `?` — the starts of an HTML tag, end tag, comment/doctype/CDATA or
 * processing instruction. A `<` followed by anything else (`a < b`, `<3`, `<=`) stays allowed
 * because no HTML parser treats it as markup. The UI still renders these texts as text; the
 * rule keeps markup out of stored data so no consumer can be tricked into rendering it.
 */
export const HTML_PATTERN = /<[A-Za-z/!?]/;
export const NO_HTML_MESSAGE = 'must not contain HTML (`<` followed by a letter, `/`, `!` or `?`)';

export function containsHtml(text: string): boolean {
  return HTML_PATTERN.test(text);
}

/**
 * Length in Unicode code points (what a person counts as characters for most scripts). Used
 * for every text size limit and for `minLength`/`maxLength` of values, so that an emoji or a
 * CJK extension character counts once, not twice as in UTF-16 `.length`.
 */
export function codePointLength(text: string): number {
  return Array.from(text).length;
}

/** The text size limits of spec 8, in code points. */
export const TEXT_LIMITS = {
  label: 200,
  description: 1000,
  placeholder: 300,
  pattern: 500,
  optionValue: 200,
  optionLabel: 200,
  section: 100,
  helpText: 500,
  component: 50,
} as const;

/** Options per SELECT / MULTI_SELECT field (spec 8). */
export const MAX_OPTIONS = 200;
