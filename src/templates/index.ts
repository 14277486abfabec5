// The built-in template library, registered by explicit import, and the rules every saved template must pass.
import { characters } from '../lib/names';
import { re2LinePattern, re2Problem } from '../lib/re2';
import { SESSION_FIELDS, SESSION_PATTERN_LISTS, engineDefaults, trustedPattern } from './defaults';
import { loadBuiltinTemplates } from './files';
import type { OutputRule, RedactRule, SessionKnowledge, TemplateSpec } from './types';

export type { OutputRule, PagerRule, RedactRule, SessionKnowledge, TemplateSpec } from './types';

let builtins: readonly TemplateSpec[] | undefined;
let byName: ReadonlyMap<string, TemplateSpec> | undefined;

/**
 * The built-in library: one YAML file per template in src/templates/builtin/, parsed once, on first use. A command
 * whose database already holds this library (the sync's fingerprint, templates.service.ts) never parses it: the
 * 56 files are a third of a short command's start-up.
 */
export function builtinTemplates(): readonly TemplateSpec[] {
  return (builtins ??= Object.freeze(loadBuiltinTemplates()));
}

// Read at start like the built-ins: a missing or broken defaults file is a release bug that must stop the process,
// not fail the first backup.
engineDefaults();

export function getBuiltinTemplate(name: string): TemplateSpec | undefined {
  byName ??= new Map(builtinTemplates().map((t) => [t.name, t]));
  return byName.get(name);
}

let lowerNames: ReadonlySet<string> | undefined;

/** Whether `name` is a built-in's, letter case aside: such names are reserved for the built-ins. */
export function isBuiltinTemplateName(name: string): boolean {
  lowerNames ??= new Set(builtinTemplates().map((t) => t.name.toLowerCase()));
  return lowerNames.has(name.toLowerCase());
}

export interface TemplateFieldError {
  field: string;
  message: string;
}

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
} as const;

/** The character set of a template name: a lower-case letter or digit, then lower-case letters, digits, ".", "_", "-". */
export const TEMPLATE_NAME_RE = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * Checks a template before it is saved (custom templates through the API; built-ins in the tests).
 * Returns one entry per problem, `field` being the dotted path ("strip_patterns.3", "enable.prompt");
 * an empty list means the template is usable.
 */
export function validateTemplate(spec: TemplateSpec): TemplateFieldError[] {
  const errors: TemplateFieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field, message });
  const t = spec as Partial<Record<keyof TemplateSpec, unknown>>;

  if (typeof t.name !== 'string' || characters(t.name) < 1 || characters(t.name) > TEMPLATE_LIMITS.name_max) {
    add('name', `must be 1-${TEMPLATE_LIMITS.name_max} characters`);
  } else if (!TEMPLATE_NAME_RE.test(t.name)) {
    add('name', 'must start with a lower-case letter or digit and use only a-z, 0-9, ".", "_" and "-"');
  }
  checkText(t.vendor, 'vendor', 1, TEMPLATE_LIMITS.vendor_max, add);
  checkText(t.description, 'description', 0, TEMPLATE_LIMITS.description_max, add);
  if (t.mode !== 'shell' && t.mode !== 'exec') add('mode', 'must be "shell" or "exec"');
  if (t.prompt !== null) checkPromptPattern(t.prompt, 'prompt', add);

  checkCommands(t.pre_commands, 'pre_commands', 0, add);
  checkCommands(t.commands, 'commands', 1, add);

  if (t.enable !== null) {
    if (typeof t.enable !== 'object' || t.enable === null) add('enable', 'must be null or an object with command, password_prompt and prompt');
    else {
      const e = t.enable as Partial<Record<'command' | 'password_prompt' | 'prompt' | 'prompt_unchanged', unknown>>;
      checkCommand(e.command, 'enable.command', add);
      checkPromptPattern(e.password_prompt, 'enable.password_prompt', add);
      if (e.prompt !== null) checkPromptPattern(e.prompt, 'enable.prompt', add);
      if (e.prompt_unchanged !== undefined && typeof e.prompt_unchanged !== 'boolean') add('enable.prompt_unchanged', 'must be true or false');
    }
  }

  for (const list of ['strip_patterns', 'ignore_patterns'] as const) {
    const patterns = t[list];
    if (!checkList(patterns, list, TEMPLATE_LIMITS.patterns_per_list, add)) continue;
    patterns.forEach((p, i) => {
      if (checkPattern(p, `${list}.${i}`, add) && matchesEveryLine(p as string)) {
        add(`${list}.${i}`, 'matches every line (an empty or ".*"-like pattern would drop or hide the whole configuration)');
      }
    });
  }

  if (checkList(t.redact_patterns, 'redact_patterns', TEMPLATE_LIMITS.patterns_per_list, add)) {
    t.redact_patterns.forEach((r, i) => {
      const rule = r as { pattern?: unknown; replacement?: unknown; within?: unknown } | null;
      if (typeof rule !== 'object' || rule === null) {
        return add(`redact_patterns.${i}`, 'must be an object with a pattern (and an optional replacement and within)');
      }
      if (rule.within !== undefined) checkPattern(rule.within, `redact_patterns.${i}.within`, add);
      if (checkPattern(rule.pattern, `redact_patterns.${i}.pattern`, add) && runnable(rule.pattern as string).test('')) {
        add(`redact_patterns.${i}.pattern`, 'matches the empty string, so the replacement would be inserted between every character');
      }
      if (rule.replacement !== undefined) checkText(rule.replacement, `redact_patterns.${i}.replacement`, 0, TEMPLATE_LIMITS.pattern_max, add, true);
      else if (typeof rule.pattern === 'string' && !/\(\?P?<secret>/.test(rule.pattern)) {
        add(`redact_patterns.${i}.pattern`, 'must name the secret with a group (?<secret>...) when no replacement is given');
      }
    });
  }

  if (t.change_events !== undefined && checkList(t.change_events, 'change_events', TEMPLATE_LIMITS.patterns_per_list, add)) {
    t.change_events.forEach((p, i) => {
      if (checkPattern(p, `change_events.${i}`, add) && matchesEveryLine(p as string)) {
        add(`change_events.${i}`, 'matches every message, so every syslog line from the device would start a backup');
      }
    });
  }

  if (t.session !== undefined) checkSession(t.session, add);
  if (t.command_output !== undefined) checkCommandOutput(t.command_output, Array.isArray(t.commands) ? t.commands : [], add);

  if (typeof t.redact !== 'boolean') add('redact', 'must be true or false');
  if (t.exit_command !== null) checkCommand(t.exit_command, 'exit_command', add);
  return errors;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(value: Record<string, unknown>, known: readonly string[], field: string, what: string, add: Add): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) add(`${field}.${key}`, `is not ${what} (known: ${known.join(', ')})`);
}

/** What a match-everything pattern would do in each session list. */
const EVERY_LINE: Record<(typeof SESSION_PATTERN_LISTS)[number], string> = {
  enable_refused: 'every privilege change would be taken as refused',
  command_errors: 'every short output would be taken for a refused command',
  press_enter: 'every line would be answered with Enter',
};

function checkSession(value: unknown, add: Add): void {
  if (!isMapping(value)) return add('session', `must be an object with some of: ${SESSION_FIELDS.join(', ')}`);
  checkKeys(value, SESSION_FIELDS, 'session', 'a session field', add);
  const s = value as Partial<Record<keyof SessionKnowledge, unknown>>;
  if (s.pagers !== undefined && checkList(s.pagers, 'session.pagers', TEMPLATE_LIMITS.patterns_per_list, add)) {
    s.pagers.forEach((p, i) => {
      const field = `session.pagers.${i}`;
      if (!isMapping(p)) return add(field, 'must be an object with a pattern, an answer and optionally quiet');
      checkKeys(p, ['pattern', 'answer', 'quiet'], field, 'a pager field', add);
      checkLinePattern(p.pattern, `${field}.pattern`, 'every line would be answered as a pager', add);
      checkText(p.answer, `${field}.answer`, 1, TEMPLATE_LIMITS.answer_max, add, true);
      if (p.quiet !== undefined && typeof p.quiet !== 'boolean') add(`${field}.quiet`, 'must be true or false');
    });
  }
  for (const field of ['username_prompt', 'password_prompt'] as const) {
    if (s[field] !== undefined) checkLinePattern(s[field], `session.${field}`, 'every line would be taken for that login question', add);
  }
  for (const field of SESSION_PATTERN_LISTS) {
    const list = s[field];
    if (list === undefined || !checkList(list, `session.${field}`, TEMPLATE_LIMITS.patterns_per_list, add)) continue;
    list.forEach((p, i) => checkLinePattern(p, `session.${field}.${i}`, EVERY_LINE[field], add));
  }
}

const OUTPUT_FIELDS = ['start_after', 'stop_before', 'drop_first', 'drop_last'] as const;

function checkCommandOutput(value: unknown, commands: readonly unknown[], add: Add): void {
  if (!isMapping(value)) return add('command_output', 'must be an object of capture command → output rule');
  const entries = Object.entries(value);
  if (entries.length > TEMPLATE_LIMITS.commands_per_list) return add('command_output', `must hold at most ${TEMPLATE_LIMITS.commands_per_list} entries`);
  for (const [command, rule] of entries) {
    const field = `command_output.${command}`;
    if (!commands.includes(command)) add(field, "is not one of the template's capture commands (the key is the command exactly as in commands)");
    if (!isMapping(rule)) {
      add(field, `must be an object with some of: ${OUTPUT_FIELDS.join(', ')}`);
      continue;
    }
    checkKeys(rule, OUTPUT_FIELDS, field, 'an output rule field', add);
    if (rule.start_after !== undefined) checkPattern(rule.start_after, `${field}.start_after`, add);
    if (rule.stop_before !== undefined) checkLinePattern(rule.stop_before, `${field}.stop_before`, 'the output would be cut before its first line', add);
    for (const n of ['drop_first', 'drop_last'] as const) {
      const v = rule[n];
      if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= TEMPLATE_LIMITS.output_lines_max)) {
        add(`${field}.${n}`, `must be a whole number of 0-${TEMPLATE_LIMITS.output_lines_max}`);
      }
    }
  }
}

/** The patterns of a template's `session` and `command_output`, by field ("session.pagers.0.pattern"). */
function sessionPatterns(spec: Partial<Pick<TemplateSpec, 'session' | 'command_output'>>): [field: string, source: string][] {
  const out: [string, unknown][] = [];
  const s = spec.session;
  if (isMapping(s)) {
    (Array.isArray(s.pagers) ? (s.pagers as unknown[]) : []).forEach((p, i) => out.push([`session.pagers.${i}.pattern`, isMapping(p) ? p.pattern : undefined]));
    out.push(['session.username_prompt', s.username_prompt], ['session.password_prompt', s.password_prompt]);
    for (const field of SESSION_PATTERN_LISTS) {
      const list: unknown = s[field];
      if (Array.isArray(list)) list.forEach((p: unknown, i) => out.push([`session.${field}.${i}`, p]));
    }
  }
  for (const [command, rule] of Object.entries(isMapping(spec.command_output) ? spec.command_output : {})) {
    if (isMapping(rule)) out.push([`command_output.${command}.start_after`, rule.start_after], [`command_output.${command}.stop_before`, rule.stop_before]);
  }
  return out.filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

type Add = (field: string, message: string) => void;

function checkText(value: unknown, field: string, min: number, max: number, add: Add, singleLine = false): void {
  if (typeof value !== 'string' || characters(value) < min || characters(value) > max) add(field, `must be a string of ${min}-${max} characters`);
  else if (singleLine && /[\r\n]/.test(value)) add(field, 'must not contain a line break');
}

function checkList(value: unknown, field: string, max: number, add: Add): value is unknown[] {
  if (!Array.isArray(value)) {
    add(field, 'must be a list');
    return false;
  }
  if (value.length > max) {
    add(field, `must hold at most ${max} entries`);
    return false;
  }
  return true;
}

function checkCommands(value: unknown, field: string, min: number, add: Add): void {
  if (!checkList(value, field, TEMPLATE_LIMITS.commands_per_list, add)) return;
  if (value.length < min) add(field, `must hold at least ${min} command`);
  value.forEach((c, i) => checkCommand(c, `${field}.${i}`, add));
}

function checkCommand(value: unknown, field: string, add: Add): void {
  if (typeof value !== 'string' || characters(value) < 1 || characters(value) > TEMPLATE_LIMITS.command_max) {
    add(field, `must be a command of 1-${TEMPLATE_LIMITS.command_max} characters`);
  } else if (/[\r\n]/.test(value)) {
    add(field, 'must be a single line (no line breaks)');
  } else if (value.trim() === '') {
    add(field, 'must not be blank');
  }
}

let builtinSources: ReadonlySet<string> | null = null;

/**
 * True for a pattern written in a built-in template: trusted code, reviewed with the templates, which may use
 * JavaScript-only syntax (lookaround, backreferences). A custom template copied from a built-in keeps them.
 */
export function isBuiltinPattern(source: string): boolean {
  if (!builtinSources) {
    const set = new Set<string>();
    for (const t of builtinTemplates()) {
      for (const p of [...t.strip_patterns, ...t.ignore_patterns, ...redactSources(t.redact_patterns), ...(t.change_events ?? [])]) set.add(p);
      for (const p of [t.prompt, t.enable?.prompt, t.enable?.password_prompt]) if (p) set.add(p);
      for (const [, p] of sessionPatterns(t)) set.add(p);
    }
    builtinSources = set;
  }
  return builtinSources.has(source);
}

/**
 * Every saved pattern the engine cannot run (custom templates saved before patterns were RE2), by field
 * ("strip_patterns.2", "enable.prompt"), with RE2's reason. `db check` and the template page report them.
 */
export function patternProblems(
  spec: Partial<
    Pick<TemplateSpec, 'strip_patterns' | 'ignore_patterns' | 'redact_patterns' | 'prompt' | 'enable' | 'change_events' | 'session' | 'command_output'>
  >,
): { field: string; problem: string }[] {
  const out: { field: string; problem: string }[] = [];
  const check = (field: string, source: string | null | undefined) => {
    if (!source || isBuiltinPattern(source)) return;
    const problem = re2Problem(source);
    if (problem !== null) out.push({ field, problem });
  };
  check('prompt', spec.prompt);
  check('enable.password_prompt', spec.enable?.password_prompt);
  check('enable.prompt', spec.enable?.prompt);
  (spec.strip_patterns ?? []).forEach((p, i) => check(`strip_patterns.${i}`, p));
  (spec.ignore_patterns ?? []).forEach((p, i) => check(`ignore_patterns.${i}`, p));
  (spec.redact_patterns ?? []).forEach((r, i) => {
    check(`redact_patterns.${i}.pattern`, r.pattern);
    check(`redact_patterns.${i}.within`, r.within);
  });
  (spec.change_events ?? []).forEach((p, i) => check(`change_events.${i}`, p));
  for (const [field, source] of sessionPatterns(spec)) check(field, source);
  return out;
}

/** Every pattern of a template's redact rules: each rule's pattern and its section opening (`within`). */
function redactSources(rules: readonly RedactRule[]): string[] {
  return rules.flatMap((r) => (r.within === undefined ? [r.pattern] : [r.pattern, r.within]));
}

/** A pattern as it runs: JavaScript for built-in sources, RE2 (linear time) for everything else. */
function runnable(source: string): { test(line: string): boolean } {
  return isBuiltinPattern(source) ? trustedPattern(source) : re2LinePattern(source);
}

/**
 * Adds an error and returns false unless `value` is a size-limited pattern the engine can run: RE2 syntax (no
 * backreferences, no lookaround), which matches in time linear in the line whatever the pattern, so no saved
 * pattern can stall backups or the server with catastrophic backtracking.
 */
function checkPattern(value: unknown, field: string, add: Add): boolean {
  if (typeof value !== 'string' || characters(value) < 1 || characters(value) > TEMPLATE_LIMITS.pattern_max) {
    add(field, `must be a regular expression of 1-${TEMPLATE_LIMITS.pattern_max} characters`);
    return false;
  }
  if (isBuiltinPattern(value)) return true;
  const problem = re2Problem(value);
  if (problem !== null) {
    add(field, `is not valid RE2 syntax: ${problem}`);
    return false;
  }
  return true;
}

function checkPromptPattern(value: unknown, field: string, add: Add): void {
  checkLinePattern(value, field, 'any output would be taken for the prompt', add);
}

/** A pattern that must not match every line; `consequence` says what would happen if it did. */
function checkLinePattern(value: unknown, field: string, consequence: string, add: Add): void {
  if (checkPattern(value, field, add) && matchesEveryLine(value as string)) add(field, `matches every line, so ${consequence}`);
}

/** A sample of unrelated lines: a pattern matching all of them matches every line. */
const SAMPLE_LINES = ['', 'hostname core-sw1', ' ip address 10.0.0.1 255.255.255.0', '}', '#'];

function matchesEveryLine(source: string): boolean {
  const re = runnable(source);
  return SAMPLE_LINES.every((line) => re.test(line));
}

/**
 * A template's `session` and `command_output` with a fixed key order and the empty ones left out, so equal settings
 * give equal stored text (built-in sync compares it) and audit diffs show real changes only.
 */
export function sessionSettings(spec: Pick<TemplateSpec, 'session' | 'command_output'>): Pick<TemplateSpec, 'session' | 'command_output'> {
  const out: Pick<TemplateSpec, 'session' | 'command_output'> = {};
  const s = spec.session;
  if (s) {
    const session: SessionKnowledge = {
      pagers: s.pagers?.map((p) => ({ pattern: p.pattern, answer: p.answer, ...(p.quiet ? { quiet: true } : {}) })),
      username_prompt: s.username_prompt,
      password_prompt: s.password_prompt,
      enable_refused: s.enable_refused,
      command_errors: s.command_errors,
      press_enter: s.press_enter,
    };
    const kept = Object.entries(session).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
    if (kept.length > 0) out.session = Object.fromEntries(kept);
  }
  const rules = Object.entries(spec.command_output ?? {}).map(([command, r]): [string, OutputRule] => [
    command,
    Object.fromEntries(
      [
        ['start_after', r.start_after],
        ['stop_before', r.stop_before],
        ['drop_first', r.drop_first],
        ['drop_last', r.drop_last],
      ].filter(([, v]) => v !== undefined),
    ) as OutputRule,
  ]);
  if (rules.length > 0) out.command_output = Object.fromEntries(rules);
  return out;
}
