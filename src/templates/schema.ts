// The one description of a template's fields: shape, limits, defaults and documentation. The TemplateSpec type, the field
// order of exported files, the file check, the API's schemas and schema/template.schema.json all derive from it;
// validateTemplate (index.ts) adds only what a schema cannot say (RE2 syntax, match-everything patterns, named groups).
import { z } from 'zod';
import { TEXT_PATTERN, characters, descriptionProblem, descriptionRules } from '../lib/names';

export const TEMPLATE_LIMITS = {
  name_max: 64,
  vendor_max: 128,
  description_max: 2000,
  pattern_max: 512,
  patterns_per_list: 100,
  command_max: 512,
  commands_per_list: 100,
  /** A pager answer: a key or two ("q", " "), never a command. */
  answer_max: 16,
  /** drop_first / drop_last of a command_output rule. */
  output_lines_max: 10_000,
  /** Names another tool gives this platform, per tool. */
  aliases_per_tool: 50,
} as const;

const L = TEMPLATE_LIMITS;

/** The character set of a template name: a lower-case letter or digit, then lower-case letters, digits, ".", "_", "-". */
export const TEMPLATE_NAME_RE = /^[a-z0-9][a-z0-9._-]*$/;
const NAME_RULE = 'must start with a lower-case letter or digit and use only a-z, 0-9, ".", "_" and "-"';
/** One line with something on it: what a command is (a line break would send a second command). */
const ONE_NON_BLANK_LINE = /^[^\r\n]*\S[^\r\n]*$/;
const ONE_LINE = /^[^\r\n]*$/;
const RE2_SHORT = 'RE2 syntax for custom templates (no backreferences, no lookaround; matched in time linear in the line)';

/** Said once per list of patterns: what the engine accepts, and why. */
const RE2_NOTE =
  'Patterns are RE2 syntax (as in Go, re2js): no backreferences (\\1) and no lookaround ((?=…), (?!…), (?<=…), (?<!…)). ' +
  'RE2 matches in time linear in the line whatever the pattern, so no pattern can stall backups or the server. A pattern RE2 cannot compile, or one ' +
  'that matches every line, is refused naming the field; patterns copied unchanged from a built-in template are accepted as they are.';

type Meta = { description: string; examples?: unknown[]; default?: unknown };

/** A string of `min`-`max` characters (code points, as JSON Schema counts them). */
function text(min: number, max: number, meta: Meta) {
  return z
    .string()
    .refine((s) => characters(s) >= min && characters(s) <= max, `must be a string of ${min}-${max} characters`)
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max, ...meta });
}

/** A regex matched against one line. */
const pattern = (description: string, example?: string) =>
  text(1, L.pattern_max, { description: `${description}. ${RE2_SHORT}.`, ...(example === undefined ? {} : { examples: [example] }) });

const command = (description: string, example: string) =>
  z
    .string()
    .refine((s) => characters(s) >= 1 && characters(s) <= L.command_max, `must be a command of 1-${L.command_max} characters`)
    .regex(ONE_NON_BLANK_LINE, 'must be one non-blank line (no line breaks)')
    .meta({ minLength: 1, maxLength: L.command_max, description: `${description}; one non-blank line, 1-${L.command_max} characters`, examples: [example] });

const list = <T extends z.ZodType>(item: T, max: number) => z.array(item).max(max, `must hold at most ${max} entries`);

/** An object that refuses unknown keys, naming the ones it knows. */
function fieldsOf<S extends z.ZodRawShape>(what: string, shape: S) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, { error: (iss) => (iss.code === 'unrecognized_keys' ? `is not ${what} (known: ${known})` : undefined) });
}

const booleanFlag = (description: string) => z.boolean().optional().meta({ description, default: false });

const EnableSchema = fieldsOf('an enable field', {
  command: command('Command that enters privileged mode', 'enable'),
  password_prompt: pattern('Matches the password question after the command', '[Pp]assword: ?$'),
  prompt: pattern('Prompt in privileged mode', '[\\w.-]+# ?$').nullable().meta({ description: 'Prompt in privileged mode; null: any prompt ending in "#".' }),
  prompt_unchanged: booleanFlag(
    'The prompt does not show the privilege level (Huawei VRP and HPE Comware `super`): privileged mode counts as entered when the prompt comes back with no error line.',
  ),
});

export const RedactRuleSchema = fieldsOf('a redact rule field', {
  pattern: pattern(
    'Matched against each line. Without a replacement it must name the secret with a group (?<secret>...), stored as a keyed token <secret:3fa9c1d2>',
    '^(snmp-server community) (?<secret>\\S+)',
  ),
  replacement: text(0, L.pattern_max, {
    description:
      'The older form: replacement text used as written ($1 etc. refer to groups, $<name> to a named group, $& to the whole match, $$ is "$"). Absent (the usual form): the (?<secret>...) group is replaced by a keyed token.',
    examples: ['$1 <redacted>'],
  })
    .regex(ONE_LINE, 'must not contain a line break')
    .optional(),
  within: pattern(
    "Regex of a section's opening line (^config system snmp community): the rule applies only inside such sections, from the line after the opening line up to the next non-blank line indented no deeper than it (FortiOS's end, the next top-level command). Absent: every line",
    '^config system snmp community',
  ).optional(),
});

export const PagerSchema = fieldsOf('a pager field', {
  pattern: pattern('Matched against the last line of output (after terminal clean-up)', '^Press <SPACE> to continue or <Q> to quit:$'),
  answer: text(1, L.answer_max, {
    description: 'Keys sent as typed, no Enter, e.g. " " (next page) or "q" (a line answered with Enter belongs in press_enter)',
    examples: [' '],
  }).regex(ONE_LINE, 'must not contain a line break'),
  quiet: booleanFlag('Answer only when the output has been quiet a moment (a pattern too short to trust on its own, such as less\'s ":").'),
});

const patternList = (description: string, item: string, example: string) => list(pattern(item, example), L.patterns_per_list).optional().meta({ description });

export const SessionSchema = fieldsOf('a session field', {
  pagers: list(PagerSchema, L.patterns_per_list).optional().meta({ description: 'Pagers the device prints and what answers them.' }),
  username_prompt: pattern(
    'Login question for the user name when the transport asks in the session (Telnet, some SSH banners), also answered on the way into privileged mode',
    '^Account:\\s*$',
  ).optional(),
  password_prompt: pattern('Login question for the password (Telnet login and the enable step)', '^Passphrase:\\s*$').optional(),
  enable_refused: patternList('Lines by which the CLI refuses a privilege change ("% Bad secrets").', 'Refusal line', 'Privilege raise rejected'),
  command_errors: patternList(
    'Lines by which the CLI refuses a command ("% Invalid input"): such output is never stored.',
    'Error line',
    '^Error \\d+: verb not known',
  ),
  press_enter: patternList('Lines answered with Enter, at login or in the middle of output ("Press any key to continue").', 'Question line', '^Hit <Enter> to'),
}).meta({
  description:
    "Vendor prompts, pagers and refusal lines the session driver tries before the engine's defaults (which stay in force). Every field optional: a platform with an unusual pager, login question or refusal line needs these, not a new release.",
});

const lineCount = (description: string) =>
  z
    .number()
    .int(`must be a whole number of 0-${L.output_lines_max}`)
    .min(0, `must be a whole number of 0-${L.output_lines_max}`)
    .max(L.output_lines_max, `must be a whole number of 0-${L.output_lines_max}`)
    .optional()
    .meta({ description });

export const OutputRuleSchema = fieldsOf('an output rule field', {
  start_after: pattern(
    'Output starts after the first line matching this (that line dropped); no matching line: nothing cut',
    '^Current configuration',
  ).optional(),
  stop_before: pattern('Output stops before the first line matching this (that line and the rest dropped)', '^end$').optional(),
  drop_first: lineCount('Drop this many lines at the start.'),
  drop_last: lineCount('Drop this many lines at the end.'),
}).meta({ description: "Cuts of one capture command's output, applied in this order before strip and redaction." });

const alias = z.string().max(L.name_max).regex(TEMPLATE_NAME_RE, NAME_RULE).meta({ maxLength: L.name_max, description: 'A name in lower case' });
const aliasList = (description: string, example: string) =>
  list(alias, L.aliases_per_tool)
    .optional()
    .meta({ description, examples: [[example]] });

const AliasesSchema = fieldsOf('a tool whose names are known', {
  oxidized: aliasList("Oxidized model names (a router.db line's model) that import as this template.", 'ios'),
  rancid: aliasList("RANCID device types (a router.db line's type) that import as this template.", 'cisco'),
}).meta({
  description:
    'Names other backup tools give this platform: a device imported from an Oxidized or RANCID router.db with such a model becomes a device with this template.',
  examples: [{ oxidized: ['ios', 'iosxe'], rancid: ['cisco'] }],
});

const DetectProbeSchema = fieldsOf('a detect probe field', {
  command: command(
    'A safe, read-only command whose output names the platform, run once per detection whatever the number of templates naming it',
    'show version',
  ),
  patterns: list(pattern("Matched against each line of the probe's output", '^Cisco IOS Software'), L.patterns_per_list)
    .min(1, 'must hold at least 1 pattern')
    .meta({ description: "Lines of the probe's output that name this platform; one match is enough." }),
}).meta({ description: 'One read-only command to run after login, and what its output shows on this platform.' });

export const DetectSchema = fieldsOf('a detect field', {
  priority: z
    .number()
    .int('must be a whole number of 0-100')
    .min(0, 'must be a whole number of 0-100')
    .max(100, 'must be a whole number of 0-100')
    .optional()
    .meta({
      description:
        'Breaks a tie between templates whose evidence weighs the same: the higher wins. A specific platform (Cumulus, VyOS) above the generic one it is built on (linux). Absent: 50.',
      default: 50,
    }),
  banner: patternList('Lines of the text the device prints after login, before its first prompt, that name this platform.', 'Banner line', '^Welcome to VyOS'),
  prompt: patternList("The device's first prompt, when its shape is this platform's alone.", 'Prompt', '^\\(\\S+\\) >$'),
  probe: DetectProbeSchema.optional(),
}).meta({
  description:
    'How detection (template: auto) recognises this platform: patterns on the login banner, the prompt, and the output of one read-only probe command. A probe match weighs 10, a banner match 5, a prompt match 3 (each source counted once); the highest total wins, then the highest priority; below 3 nothing is picked. Absent: the template is never picked by detection.',
});

/**
 * Every field of a template, in the order an exported file lists them. Fields with a default may be left out of a file
 * or a new template's request (TemplateFileSchema); session, command_output and aliases are optional.
 */
const specShape = {
  name: z
    .string()
    .refine((s) => characters(s) >= 1 && characters(s) <= L.name_max, `must be 1-${L.name_max} characters`)
    .regex(TEMPLATE_NAME_RE, NAME_RULE)
    .meta({
      minLength: 1,
      maxLength: L.name_max,
      description: `Unique name (case-insensitive), 1-${L.name_max} characters: a lower-case letter or digit, then lower-case letters, digits, ".", "_", "-". Built-in names are reserved for the built-ins.`,
      examples: ['cisco-ios-acme'],
    }),
  vendor: text(1, L.vendor_max, { description: 'Vendor / platform label shown in lists.', examples: ['Cisco IOS / IOS-XE'] }),
  description: z
    .string()
    .refine((s) => characters(s) <= L.description_max, `must be at most ${L.description_max} characters`)
    .refine((s) => descriptionProblem(s) === null, 'must not contain control characters other than tab and line breaks')
    .meta({ maxLength: L.description_max, pattern: TEXT_PATTERN, description: `Free text. ${descriptionRules(L.description_max)}` }),
  aliases: AliasesSchema.optional(),
  detect: DetectSchema.optional(),
  mode: z.enum(['shell', 'exec'], { error: 'must be "shell" or "exec"' }).meta({
    description:
      '"shell": interactive session driven by the prompt; "exec": one SSH exec channel per command, no prompt handling (SSH only; Telnet falls back to shell).',
  }),
  prompt: pattern('Matches the device prompt at the end of the output', '[\\w.-]+[#>] ?$')
    .nullable()
    .meta({ description: 'Regex matching the device prompt at the end of the output; null detects the prompt after login.' }),
  pre_commands: list(command('Command', 'terminal length 0'), L.commands_per_list).meta({
    description: 'Commands sent before the capture commands, output discarded (paging off, terminal width).',
  }),
  commands: list(command('Command', 'show running-config'), L.commands_per_list)
    .min(1, 'must hold at least 1 command')
    .meta({ description: 'Commands whose output, concatenated in order, is the configuration. At least one.', examples: [['show running-config']] }),
  enable: EnableSchema.nullable().meta({
    description:
      'Privileged-mode step, run when the credential carries an enable secret; null for none. A "Username:" question on the way (ProCurve manager login) is answered with the credential\'s username.',
  }),
  strip_patterns: list(pattern('Line pattern', '^! Last configuration change at '), L.patterns_per_list).meta({
    description: `Lines matching any of these are removed before storing (volatile lines). ${RE2_NOTE}`,
  }),
  ignore_patterns: list(pattern('Line pattern', '^ntp clock-period '), L.patterns_per_list).meta({
    description: 'Lines matching any of these are stored but not counted as a change.',
  }),
  redact_patterns: list(RedactRuleSchema, L.patterns_per_list).meta({
    description:
      'Secret-masking rules, applied line by line when redaction is on. Redaction also always replaces the body of a multi-line PEM private key with one "<redacted private key>" line, keeping its BEGIN and END lines.',
  }),
  change_events: list(pattern('Syslog message pattern', '%SYS-5-CONFIG_I: Configured from \\S+ by (?<user>\\S+)'), L.patterns_per_list)
    .optional()
    .meta({
      description:
        'Syslog messages by which the device reports a configuration change: a message from the device matching any of these queues a backup with trigger "event" ' +
        '(when the appliance\'s syslog receiver is on). A named group "user" captures who made the change.',
    }),
  session: SessionSchema.optional(),
  command_output: z
    .record(z.string().min(1).max(L.command_max), OutputRuleSchema)
    .optional()
    .meta({
      description: 'Per capture command (keyed by the command exactly as in `commands`): lines to cut from its output, before strip and redaction.',
      examples: [{ 'show running-config': { start_after: '^Current configuration', drop_last: 0 } }],
    }),
  redact: z.boolean().meta({
    description:
      "Whether backups with this template redact secrets when the appliance's redact_secrets is on (the default). false stores this template's configurations restorable, secrets in clear text.",
  }),
  exit_command: command('Command', 'exit').nullable().meta({ description: 'Sent to close a shell session politely; null sends nothing.' }),
};

/** A template as the engine and the services hold it: every field present but the optional ones. */
export const TemplateSpecSchema = z.strictObject(specShape, {
  error: (iss) => (iss.code === 'unrecognized_keys' ? `is not a template field (known fields: ${Object.keys(specShape).join(', ')})` : undefined),
});

type TemplateSpec = z.infer<typeof TemplateSpecSchema>;

/** Every field of a template file, in the order an exported file lists them. */
export const TEMPLATE_FIELDS = Object.keys(specShape) as (keyof TemplateSpec)[];

/** A template file, or a new template's request: the fields with a default may be left out. */
export const TemplateFileSchema = TemplateSpecSchema.extend({
  description: specShape.description.default(''),
  mode: specShape.mode.default('shell'),
  prompt: specShape.prompt.default(null),
  pre_commands: specShape.pre_commands.default([]),
  enable: specShape.enable.default(null),
  strip_patterns: specShape.strip_patterns.default([]),
  ignore_patterns: specShape.ignore_patterns.default([]),
  redact_patterns: specShape.redact_patterns.default([]),
  change_events: specShape.change_events.default([]),
  redact: specShape.redact.default(true),
  exit_command: specShape.exit_command.default(null),
});

/** What a file (or a new template's request) that leaves a field out gets: the schema's defaults, fresh each call. */
export function templateDefaults(): Partial<TemplateSpec> {
  const entries = Object.entries(TemplateFileSchema.shape).flatMap(([k, s]): [string, unknown][] =>
    s instanceof z.ZodDefault ? [[k, structuredClone(s.def.defaultValue)]] : [],
  );
  return Object.fromEntries(entries);
}

/** A problem of one field: `field` is the dotted path ("strip_patterns.3", "enable.prompt", "session.pager"). */
export interface TemplateFieldError {
  field: string;
  message: string;
}

const TYPE_NAMES: Record<string, string> = {
  array: 'must be a list',
  object: 'must be a mapping (an object)',
  record: 'must be a mapping (an object)',
  string: 'must be a string',
  boolean: 'must be true or false',
  number: 'must be a number',
  int: 'must be a whole number',
};

/** Whether the field at `path` may be null (prompt, enable, exit_command, enable.prompt). */
function nullableAt(path: readonly string[]): boolean {
  let node: z.ZodType = TemplateSpecSchema;
  for (const key of path) {
    while (node instanceof z.ZodOptional || node instanceof z.ZodNullable) node = node.unwrap() as z.ZodType;
    if (node instanceof z.ZodObject) node = (node.shape as Record<string, z.ZodType>)[key];
    else if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else return false;
    if (!node) return false;
  }
  while (node instanceof z.ZodOptional) node = node.unwrap() as z.ZodType;
  return node instanceof z.ZodNullable;
}

/** The schema's problems with a template, one per field, each message naming what the field must be. */
export function templateShapeErrors(value: unknown): TemplateFieldError[] {
  const r = TemplateSpecSchema.safeParse(value, { reportInput: true });
  if (r.success) return [];
  const out: TemplateFieldError[] = [];
  const add = (field: string, message: string) => out.some((e) => e.field === field) || out.push({ field, message });
  for (const i of r.error.issues) {
    const at = i.path.map(String);
    if (i.code === 'unrecognized_keys') {
      for (const key of i.keys) add([...at, key].join('.'), i.message);
      continue;
    }
    const field = at.join('.') || 'template';
    if (i.code === 'invalid_type') {
      const must = TYPE_NAMES[i.expected] ?? `must be a ${i.expected}`;
      add(field, i.input === undefined ? 'is required' : nullableAt(at) ? `${must} or null` : must);
    } else add(field, i.message);
  }
  return out;
}
