// Request and response schemas of the backup-template endpoints (the OpenAPI components), and the response converter.
import { z } from '@hono/zod-openapi';
import { TEMPLATE_LIMITS, TEMPLATE_NAME_RE } from '../../templates/index';
import { paginationQuery, pagedSchema, queryBoolean } from '../../http/openapi';
import { descriptionRules, descriptionSchema, textSchema } from '../../lib/names';
import { formatTimestamp } from '../../lib/time';
import type { Template } from './templates.store';
import { specFields } from './templates.service';

const L = TEMPLATE_LIMITS;

// Shapes and sizes are checked here; RE2 syntax and match-everything patterns are checked by the engine's
// validateTemplate, whose errors come back as the same 422 field list.
/** Said once per pattern field: what the engine accepts, and why. */
const RE2_NOTE =
  'RE2 syntax (as in Go, re2js): no backreferences (\\1) and no lookaround ((?=…), (?!…), (?<=…), (?<!…)). ' +
  'RE2 matches in time linear in the line whatever the pattern, so no pattern can stall backups or the server ' +
  '(JavaScript regexes can take exponential time on patterns such as (.|.)*x). A pattern RE2 cannot compile is refused with 422 VALIDATION_ERROR ' +
  'naming the field; patterns copied unchanged from a built-in template are accepted as they are.';
const pattern = (description: string, example: string) =>
  textSchema(1, L.pattern_max).openapi({ description: `${description} (RE2 syntax: no backreferences, no lookaround; matched in linear time)`, example });
/** One line with something on it: what a command is (a line break would send a second command). */
const ONE_NON_BLANK_LINE = /^[^\r\n]*\S[^\r\n]*$/;
const command = (description: string, example: string) =>
  textSchema(1, L.command_max)
    .regex(ONE_NON_BLANK_LINE, 'must be one non-blank line (no line breaks)')
    .openapi({ description: `${description}; one non-blank line, 1-${L.command_max} characters`, example });

const EnableSchema = z
  .object({
    command: command('Command that enters privileged mode', 'enable'),
    password_prompt: pattern('Matches the password prompt after the command', '[Pp]assword: ?$'),
    prompt: pattern('Prompt in privileged mode; null: any prompt ending in "#"', '[\\w.-]+# ?$').nullable(),
    prompt_unchanged: z.boolean().optional().openapi({
      description:
        'The prompt does not show the privilege level (Huawei VRP and HPE Comware `super`): privileged mode counts as entered when the prompt comes back with no error line. Default false.',
      example: false,
    }),
  })
  .strict()
  .openapi({ description: 'A "Username:" question after the command (ProCurve manager login) is answered with the credential\'s username.' });

const RedactRuleSchema = z
  .object({
    pattern: pattern('Matched against each line', '^(snmp-server community) \\S+'),
    replacement: textSchema(0, L.pattern_max).optional().openapi({
      description:
        'Absent (the usual form): the pattern names the secret with a group called `secret`, which is stored as a keyed token `<secret:3fa9c1d2>`. Given: replacement text; $1 etc. refer to groups, $<name> to a named group, $& to the whole match, $$ is "$"',
      example: '$1 <redacted>',
    }),
    within: pattern(
      "Optional: the regex of a section's opening line. The rule then applies only inside such sections: the lines after the opening line, up to the next non-blank line indented no deeper than it (FortiOS `end`, the next top-level command). Absent: every line",
      '^config system snmp community',
    ).optional(),
  })
  .strict()
  .openapi('RedactRule');

const PagerSchema = z
  .object({
    pattern: pattern('Matched against the line being drawn (after terminal clean-up)', '^Press <SPACE> to continue or <Q> to quit:$'),
    answer: textSchema(1, L.answer_max)
      .regex(/^[^\r\n]*$/, 'must not contain a line break')
      .openapi({ description: 'Keys sent as typed, no Enter (a line answered with Enter belongs in press_enter)', example: ' ' }),
    quiet: z
      .boolean()
      .optional()
      .openapi({ description: 'Answer only once the output has been quiet a moment (a very short pattern). Default false.', example: false }),
  })
  .strict()
  .openapi('TemplatePager');

const patternList = (what: string, example: string) =>
  z
    .array(pattern(what, example))
    .max(L.patterns_per_list)
    .optional()
    .openapi({ description: `${what}; tried before the engine defaults`, example: [example] });

const SessionSchema = z
  .object({
    pagers: z.array(PagerSchema).max(L.patterns_per_list).optional().openapi({ description: 'Pagers and their answers, tried before the engine defaults' }),
    username_prompt: pattern('Login question for the user name (Telnet login; the enable step)', '^Account:\\s*$').optional(),
    password_prompt: pattern('Login question for the password (Telnet login; the enable step)', '^Passphrase:\\s*$').optional(),
    enable_refused: patternList('A line by which the CLI refuses a privilege change', 'Privilege raise rejected'),
    command_errors: patternList('A line by which the CLI refuses a capture command (such a short output is never stored)', '^Error \\d+: verb not known'),
    press_enter: patternList('A line answered with Enter, at login or in the middle of output', '^Hit <Enter> to'),
  })
  .strict()
  .openapi('TemplateSession', {
    description:
      "Vendor knowledge for the session driver: every field optional, each tried before the engine's defaults (which stay in force). " +
      'A platform with an unusual pager, login question or refusal line needs these, not a new release.',
  });

const OutputRuleSchema = z
  .object({
    start_after: pattern('Output starts after the first line matching this (that line dropped); no match: nothing cut', '^Current configuration').optional(),
    stop_before: pattern('Output stops before the first line matching this (that line and the rest dropped)', '^end$').optional(),
    drop_first: z.number().int().min(0).max(L.output_lines_max).optional().openapi({ description: 'Lines dropped at the start', example: 1 }),
    drop_last: z.number().int().min(0).max(L.output_lines_max).optional().openapi({ description: 'Lines dropped at the end', example: 0 }),
  })
  .strict()
  .openapi('TemplateOutputRule', { description: "Cuts of one capture command's output, applied in this order before strip and redaction" });

const fields = {
  name: textSchema(1, L.name_max)
    .regex(TEMPLATE_NAME_RE, 'must start with a lower-case letter or digit and use only a-z, 0-9, ".", "_" and "-"')
    .openapi({
      description: `Unique name (case-insensitive), 1-${L.name_max} characters: a lower-case letter or digit, then lower-case letters, digits, ".", "_", "-". Built-in names are reserved.`,
      example: 'cisco-ios-acme',
    }),
  vendor: textSchema(1, L.vendor_max).openapi({ description: 'Vendor / platform label', example: 'Cisco IOS / IOS-XE' }),
  description: descriptionSchema('description', L.description_max).openapi({
    description: `Free text. ${descriptionRules(L.description_max)}`,
    example: 'IOS with the ACME banner stripped',
  }),
  mode: z.enum(['shell', 'exec']).openapi({
    description: '"shell": interactive session driven by the prompt; "exec": one SSH exec channel per command (SSH only)',
    example: 'shell',
  }),
  prompt: pattern('Device prompt at the end of the output; null detects it after login', '[\\w.-]+[#>] ?$').nullable(),
  pre_commands: z
    .array(command('Command', 'terminal length 0'))
    .max(L.commands_per_list)
    .openapi({ description: 'Commands sent first, output discarded (paging off)', example: ['terminal length 0'] }),
  commands: z
    .array(command('Command', 'show running-config'))
    .min(1)
    .max(L.commands_per_list)
    .openapi({ description: 'Commands whose concatenated output is the configuration; at least one', example: ['show running-config'] }),
  // Inline rather than a named component: the generator drops the null of a nullable $ref.
  enable: EnableSchema.nullable().openapi({
    description: 'Privileged-mode step, run when the credential has an enable secret; null for none',
    example: { command: 'enable', password_prompt: '[Pp]assword: ?$', prompt: null },
  }),
  strip_patterns: z
    .array(pattern('Line pattern', '^! Last configuration change at '))
    .max(L.patterns_per_list)
    .openapi({ description: `Lines matching any of these are dropped before storing. ${RE2_NOTE}`, example: ['^! Last configuration change at '] }),
  ignore_patterns: z
    .array(pattern('Line pattern', '^ntp clock-period '))
    .max(L.patterns_per_list)
    .openapi({ description: 'Lines matching any of these are stored but do not count as a change', example: [] }),
  redact_patterns: z.array(RedactRuleSchema).max(L.patterns_per_list).openapi({
    description:
      'Secret-masking rules, applied line by line when redaction is on. Redaction also always replaces the body of a multi-line PEM private key with one "<redacted private key>" line, keeping its BEGIN and END lines.',
  }),
  change_events: z
    .array(pattern('Syslog message pattern', '%SYS-5-CONFIG_I: Configured from \\S+ by (?<user>\\S+)'))
    .max(L.patterns_per_list)
    .openapi({
      description:
        'Syslog messages by which the device reports a configuration change: a message from the device matching any of these queues a backup with trigger "event" ' +
        `(when the appliance's syslog receiver is on). A named group "user" captures who made the change. ${RE2_NOTE}`,
      example: ['%SYS-5-CONFIG_I: Configured from \\S+ by (?<user>\\S+)'],
    }),
  session: SessionSchema.optional(),
  command_output: z
    .record(textSchema(1, L.command_max), OutputRuleSchema)
    .optional()
    .openapi({
      description: 'Per capture command (the key, exactly as in commands): lines cut from its output before strip and redaction',
      example: { 'show running-config': { start_after: '^Current configuration', drop_last: 0 } },
    }),
  redact: z.boolean().openapi({
    description:
      "Whether backups with this template redact secrets when the appliance's redact_secrets is on (the default). false stores this template's configurations restorable, secrets in clear text",
    example: true,
  }),
  exit_command: command('Sent to close a shell session politely; null sends nothing', 'exit').nullable(),
};

export const TemplateCreateSchema = z
  .object({
    ...fields,
    description: fields.description.default(''),
    mode: fields.mode.default('shell'),
    prompt: fields.prompt.default(null),
    pre_commands: fields.pre_commands.default([]),
    enable: fields.enable.default(null),
    strip_patterns: fields.strip_patterns.default([]),
    ignore_patterns: fields.ignore_patterns.default([]),
    redact_patterns: fields.redact_patterns.default([]),
    change_events: fields.change_events.default([]),
    redact: fields.redact.default(true),
    exit_command: fields.exit_command.default(null),
  })
  .strict()
  .openapi('TemplateCreate', {
    description: 'A new custom template. Only name, vendor and commands are required. Unknown fields are refused (422).',
  });

export const TemplateUpdateSchema = z.object(fields).partial().strict().openapi('TemplateUpdate', {
  description: 'Fields to change; omitted fields keep their value and the result is validated as a whole. Built-in templates cannot be updated (409).',
});

const timestamp = (what: string) =>
  z.string().openapi({ description: `${what}, "YYYY-MM-DD HH:MM:SS" in the request time zone`, example: '2025-03-01 14:05:09' });

export const TemplateSchema = z
  .object({
    id: z.number().int().openapi({ example: 15 }),
    ...fields,
    builtin: z.boolean().openapi({ description: 'Shipped with the appliance; read-only', example: false }),
    source: z.enum(['builtin', 'custom', 'file']).openapi({
      description:
        '"builtin": shipped with the appliance; "custom": made through the API, web interface or `template import`; "file": loaded from a YAML file in <data_dir>/templates/ (read-only here: edit the file and reload)',
      example: 'custom',
    }),
    source_file: z.string().nullable().openapi({ description: 'The YAML file of a "file" template; null otherwise', example: null }),
    device_count: z.number().int().openapi({ description: 'Devices that use this template', example: 4 }),
    created_at: timestamp('Creation time'),
    updated_at: timestamp('Last change (for built-ins: last change shipped by an upgrade)'),
  })
  .openapi('Template', { description: 'A backup template: how to pull and clean one platform’s configuration.' });

export const TemplatePageSchema = pagedSchema(TemplateSchema, 'TemplatePage');

const boolParam = queryBoolean().openapi({
  param: { name: 'builtin', in: 'query' },
  type: 'boolean',
  description: 'true: built-ins only; false: custom templates only',
});

export const TemplateListQuery = z.object({
  ...paginationQuery(50, 100),
  vendor: textSchema(0, L.vendor_max)
    .optional()
    .openapi({ param: { name: 'vendor', in: 'query' }, description: 'Exact vendor label, case-insensitive', example: 'Cisco IOS / IOS-XE' }),
  builtin: boolParam,
  q: textSchema(0, L.name_max)
    .optional()
    .openapi({ param: { name: 'q', in: 'query' }, description: 'Only templates whose name contains this text (case-insensitive)', example: 'cisco' }),
});

export type TemplateDto = z.infer<typeof TemplateSchema>;

export function toTemplateDto(t: Template, tz: string): TemplateDto {
  return {
    id: t.id,
    ...specFields(t),
    builtin: t.builtin,
    source: t.source,
    source_file: t.source_file,
    device_count: t.device_count,
    created_at: formatTimestamp(t.created_at, tz),
    updated_at: formatTimestamp(t.updated_at, tz),
  };
}
