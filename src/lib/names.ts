// Names of records: no control characters, Unicode NFC on input, and the case-folded key their uniqueness compares.
import { z } from '@hono/zod-openapi';

/** C0 controls, DEL and C1 controls: never part of a name. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The same, but tab, line feed and carriage return are text in a description (a multi-line text area). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

export function hasControlCharacters(s: string): boolean {
  return CONTROL.test(s);
}

/**
 * The key two names are compared by for uniqueness: NFC, then the full Unicode lower/upper/lower case mappings
 * (locale-independent: "Zürich", "ZÜRICH" and a decomposed "Zu\u0308rich" meet; so do "ß", "ẞ" and "SS"), then NFC
 * again. The database's unique indexes call it as the SQL function `name_key` (registered in src/db/open.ts).
 * Deterministic for a given Node.js (Unicode) version; a newer Unicode version only adds mappings of characters
 * unassigned before, and the indexes are rebuilt once when that happens (refreshNameKeys in src/db/migrate.ts).
 */
export function nameKey(s: string): string {
  return s.normalize('NFC').toLowerCase().toUpperCase().toLowerCase().normalize('NFC');
}

/**
 * Length in characters (code points), as SQLite's length() counts them in the tables' CHECK constraints and JSON
 * Schema's minLength/maxLength count them in the published document (zod's .max() counts UTF-16 units).
 */
export function characters(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The characters a name refuses, for its schema's pattern (the same set as CONTROL). */
const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

export const NAME_RULES =
  'Leading and trailing spaces are removed and the name is stored in Unicode NFC; control characters (U+0000-U+001F, U+007F-U+009F) are refused. ' +
  'Uniqueness ignores case with Unicode case folding ("Zürich", "ZÜRICH" and a decomposed "Zu\u0308rich" are the same name).';

/**
 * A zod schema of a name field: refuses control characters (422 naming `field`), trims, normalises to NFC and
 * checks 1..`max` characters. The schema stays a string schema, so callers can chain `.optional()`/`.openapi()`.
 */
export function nameSchema(field: string, max: number) {
  return z
    .string()
    .refine((s) => !hasControlCharacters(s), { message: `${field} must not contain control characters`, abort: true })
    .trim()
    .overwrite((s) => s.normalize('NFC'))
    .refine((s) => s.length > 0, `${field} must not be empty`)
    .refine((s) => characters(s) <= max, `${field} must be at most ${max} characters`)
    .openapi({ description: NAME_RULES, minLength: 1, maxLength: max, pattern: NAME_PATTERN });
}

/**
 * A string of `min`..`max` characters (code points), with the same bounds in the document: an emoji is one
 * character here, as in every generated client, not two UTF-16 units.
 */
export function textSchema(min: number, max: number) {
  return z
    .string()
    .refine(
      (s) => (s.length <= max && s.length >= 2 * min) || (characters(s) >= min && characters(s) <= max),
      min > 0 ? `must be ${min}-${max} characters` : `at most ${max} characters`,
    )
    .openapi(min > 0 ? { minLength: min, maxLength: max } : { maxLength: max });
}

/** C0 controls but tab, line feed and carriage return, DEL and C1 controls: the characters a description refuses, for its schema's pattern. */
export const TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$';

/** Why a description cannot be used, or null: control characters other than tab and line breaks. */
export function descriptionProblem(s: string): string | null {
  return CONTROL_IN_TEXT.test(s) ? 'must not contain control characters other than tab and line breaks' : null;
}

/** A zod schema of a free-text description: at most `max` characters, no control characters but tab and line breaks. */
export function descriptionSchema(field: string, max: number) {
  return textSchema(0, max)
    .refine((s) => descriptionProblem(s) === null, `${field} must not contain control characters other than tab and line breaks`)
    .openapi({ pattern: TEXT_PATTERN, description: descriptionRules(max) });
}

/** What a description accepts, for the document. */
export function descriptionRules(max: number): string {
  return `At most ${max} characters; control characters other than tab, line feed and carriage return (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F) are refused.`;
}
