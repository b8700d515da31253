import { z } from 'zod';

// What any text the gateway stores must be, whatever it is for: PostgreSQL refuses U+0000 in
// text and jsonb, and an unpaired UTF-16 surrogate has no UTF-8 form (jsonb refuses its
// escape, a text column would get U+FFFD instead of what was sent). Both are refused at the
// edge, before a service sees them, by the refinements below (every request schema that
// carries text into a store uses them).

const NUL = '\u0000';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** C0 and C1 control characters (tab and new line included: a name is one line). */
const CONTROL = /\p{Cc}/u;
/**
 * Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they make
 * a name read differently from what it holds ("Trojan Source").
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

export const STORED_TEXT_MESSAGE = 'must not contain U+0000 or an unpaired surrogate';
export const DISPLAY_NAME_MESSAGE =
  'must not contain control characters or bidirectional overrides';

/** Whether a text can be stored as it is: no U+0000, no unpaired surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes(NUL) && !LONE_SURROGATE.test(text);
}

/** Whether a text is fit to name something: storable, one line, no bidi controls, not blank. */
export function isDisplayName(text: string): boolean {
  return isStorableText(text) && !CONTROL.test(text) && !BIDI_CONTROL.test(text);
}

/** A string that is stored (or looked up in a store): `isStorableText`. */
export function storedText(): z.ZodString {
  return z.string().refine(isStorableText, STORED_TEXT_MESSAGE);
}

/**
 * A name shown to people (a platform's or an environment's display name, a label): stored
 * text without control characters or bidi overrides, not whitespace only, 1 to `max` UTF-16
 * code units.
 */
export function displayNameText(max: number): z.ZodString {
  return z
    .string()
    .min(1)
    .max(max)
    .refine(isStorableText, STORED_TEXT_MESSAGE)
    .refine((text) => !CONTROL.test(text) && !BIDI_CONTROL.test(text), DISPLAY_NAME_MESSAGE)
    .refine((text) => text.trim() !== '', 'must not be blank');
}
