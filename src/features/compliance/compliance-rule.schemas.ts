// The one shape of a compliance rule (YAML files, packs, rules kept in the database): the zod schema, its types, and the JSON Schema derived from it.
import { z } from 'zod';

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

const pattern = z.string().min(1).describe('An RE2 pattern, matched against one line (anchor it with ^ and $ as needed)');
const patterns = z.array(pattern);

const mustExist = z
  .object({
    kind: z.literal('must_exist'),
    line: pattern,
  })
  .strict()
  .describe('At least one line of the configuration matches `line`.');

const mustNotExist = z
  .object({
    kind: z.literal('must_not_exist'),
    line: pattern,
  })
  .strict()
  .describe('No line of the configuration matches `line`; every matching line is reported.');

const sections = z
  .object({
    kind: z.literal('sections'),
    match: pattern.describe('Which sections: an RE2 pattern on the section header (indent, FortiOS) or its path (braces, set)'),
    must_contain: patterns.default([]).describe('Each pattern must match a statement inside every matching section'),
    must_not_contain: patterns.default([]).describe('No statement inside a matching section may match these'),
    require_section: z.boolean().default(false).describe('Fail when no section matches at all'),
  })
  .strict()
  .describe('Section-aware check over the configuration hierarchy.');

const value = z
  .object({
    kind: z.literal('value'),
    capture: pattern.describe('An RE2 pattern with exactly one capture group: the value of each matching line'),
    count_min: z.number().int().min(0).optional().describe('At least this many lines match'),
    count_max: z.number().int().min(0).optional().describe('At most this many lines match'),
    min: z.number().optional().describe('Every captured value is a number at least this'),
    max: z.number().optional().describe('Every captured value is a number at most this'),
    not_in: z.array(z.string()).optional().describe('No captured value is one of these'),
    equals: z.string().optional().describe('Every captured value is exactly this'),
  })
  .strict()
  .describe('Capture a value from matching lines and compare it.');

const golden = z
  .object({
    kind: z.literal('golden'),
    snippet: z
      .string()
      .min(1)
      .describe('Configuration text as the device prints it; {{device.name}}, {{device.hostname}}, {{group.path}}, {{custom.FIELD}} are replaced'),
    extra_match: pattern
      .optional()
      .describe('Top-level lines matching this that are not in the snippet are reported as extra (lines inside a snippet section always are)'),
  })
  .strict()
  .describe('The snippet`s lines must be present under their parent section; missing and extra lines are reported with remediation commands.');

export const CHECK_KINDS = ['must_exist', 'must_not_exist', 'sections', 'value', 'golden'] as const;

export const complianceCheckSchema = z.discriminatedUnion('kind', [mustExist, mustNotExist, sections, value, golden]);

export const complianceRuleSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, 'lower-case letters, digits, ".", "_" and "-", at most 100, starting with a letter or digit')
      .describe('Unique rule id'),
    title: z.string().min(1).max(200),
    description: z.string().default(''),
    severity: z.enum(SEVERITIES),
    applies_to: z
      .object({
        templates: z.array(z.string().min(1)).default([]).describe('Template names; empty: every template'),
        groups: z.array(z.string().min(1)).default([]).describe('Group paths ("dc/core"); subgroups inherit; empty: every device'),
      })
      .strict()
      .default({ templates: [], groups: [] }),
    remediation: z.string().default('').describe('What to do when the rule fails (golden rules also generate commands)'),
    source: z
      .object({
        title: z.string().min(1),
        // http(s) only and no white space: what a link is, and what JSON Schema's uri format accepts.
        url: z.url({ protocol: /^https?$/ }).regex(/^https?:\/\/\S+$/),
      })
      .strict()
      .optional()
      .describe('The public guidance the rule is written from'),
    check: complianceCheckSchema,
  })
  .strict();

export type ComplianceRule = z.output<typeof complianceRuleSchema>;
export type ComplianceCheck = ComplianceRule['check'];
export type RuleStatus = 'pass' | 'fail' | 'waived' | 'not_applicable';

/** A pack file: rules shipped together (disabled until enabled per group). */
export const compliancePackSchema = z
  .object({
    pack: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    title: z.string().min(1),
    rules: z.array(complianceRuleSchema).min(1),
  })
  .strict();

export type CompliancePack = z.output<typeof compliancePackSchema>;

/** The JSON Schema of a rule file (schema/compliance-rule.schema.json): one rule, or a list of rules. */
export function complianceRuleJsonSchema(): Record<string, unknown> {
  const one = z.toJSONSchema(complianceRuleSchema, { io: 'input', target: 'draft-2020-12' });
  const { $schema, ...rule } = one as Record<string, unknown>;
  return {
    $schema,
    title: 'confvault compliance rule file',
    description: 'One compliance rule, or a list of rules (docs/compliance.md).',
    $defs: { rule },
    anyOf: [{ $ref: '#/$defs/rule' }, { type: 'array', items: { $ref: '#/$defs/rule' } }],
  };
}
