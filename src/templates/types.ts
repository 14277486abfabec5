// The shape of a backup template, as types derived from the one template schema (schema.ts, where each field is documented).
import type { z } from 'zod';
import type { OutputRuleSchema, PagerSchema, RedactRuleSchema, SessionSchema, TemplateSpecSchema } from './schema';

/**
 * A secret-masking rule, applied to one line at a time: a group named `secret` becomes a keyed token
 * `<secret:3fa9c1d2>` (src/templates/redact.ts), or the older form's `replacement` is used as written.
 */
export type RedactRule = z.infer<typeof RedactRuleSchema>;
/** A pager the device prints and what answers it. */
export type PagerRule = z.infer<typeof PagerSchema>;
/** Vendor knowledge the session driver tries before the engine defaults (src/templates/defaults.yaml). */
export type SessionKnowledge = z.infer<typeof SessionSchema>;
/** Post-processing of one capture command's output, before strip/redact. */
export type OutputRule = z.infer<typeof OutputRuleSchema>;
/** Declarative data describing how to pull and clean one vendor's configuration. */
export type TemplateSpec = z.infer<typeof TemplateSpecSchema>;
