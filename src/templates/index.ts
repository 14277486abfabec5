// The built-in template library, registered by explicit import, and the rules every saved template must pass.
import { characters } from '../lib/names';
import { re2LinePattern, re2Problem } from '../lib/re2';
import { SESSION_PATTERN_LISTS, engineDefaults, trustedPattern } from './defaults';
import { loadBuiltinTemplates } from './files';
import { TEMPLATE_FIELDS, TEMPLATE_LIMITS, templateShapeErrors, type TemplateFieldError } from './schema';
import type { OutputRule, TemplateSpec } from './types';

export { TEMPLATE_LIMITS, TEMPLATE_NAME_RE, type TemplateFieldError } from './schema';

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

/**
 * Checks a template before it is saved or loaded (custom templates through the API, the web and files; built-ins in the
 * tests): the schema's shape and limits (schema.ts), then what a schema cannot say: every pattern compiles as RE2, none
 * matches every line, a redact rule without replacement names its secret, output rules name capture commands.
 * Returns one entry per problem, `field` being the dotted path ("strip_patterns.3", "enable.prompt"); an empty list
 * means the template is usable.
 */
export function validateTemplate(spec: TemplateSpec): TemplateFieldError[] {
  const errors = templateShapeErrors(spec);
  const add = (field: string, message: string) => errors.some((e) => e.field === field) || errors.push({ field, message });
  for (const p of templatePatterns(spec)) {
    // A pattern of the wrong size is the schema's error already.
    if (characters(p.source) < 1 || characters(p.source) > TEMPLATE_LIMITS.pattern_max) continue;
    const problem = isBuiltinPattern(p.source) ? null : re2Problem(p.source);
    if (problem !== null) add(p.field, `is not valid RE2 syntax: ${problem}`);
    else if (p.everything && matchesEveryLine(p.source)) add(p.field, p.everything);
  }
  const t = spec as Partial<Record<keyof TemplateSpec, unknown>>;
  if (Array.isArray(t.redact_patterns)) {
    t.redact_patterns.forEach((r: unknown, i) => {
      if (!isMapping(r) || typeof r.pattern !== 'string') return;
      const field = `redact_patterns.${i}.pattern`;
      if (r.replacement === undefined && !/\(\?P?<secret>/.test(r.pattern))
        add(field, 'must name the secret with a group (?<secret>...) when no replacement is given');
      else if (!errors.some((e) => e.field === field) && r.pattern !== '' && runnable(r.pattern).test('')) {
        add(field, 'matches the empty string, so the replacement would be inserted between every character');
      }
    });
  }
  if (isMapping(t.command_output)) {
    const commands: unknown[] = Array.isArray(t.commands) ? t.commands : [];
    for (const command of Object.keys(t.command_output)) {
      if (!commands.includes(command))
        add(`command_output.${command}`, "is not one of the template's capture commands (the key is the command exactly as in commands)");
    }
  }
  return errors;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A pattern of a template: where it is, and the error when it matches every line (absent: it may). */
interface PatternAt {
  field: string;
  source: string;
  everything?: string;
}

const ANY_OUTPUT = 'matches every line, so any output would be taken for the prompt';
/** What a match-everything pattern would do in each session list. */
const EVERY_LINE: Record<(typeof SESSION_PATTERN_LISTS)[number], string> = {
  enable_refused: 'every privilege change would be taken as refused',
  command_errors: 'every short output would be taken for a refused command',
  press_enter: 'every line would be answered with Enter',
};

/** Every pattern a template holds, by field, read defensively (the shape may be wrong: the schema reports that). */
function templatePatterns(spec: Partial<TemplateSpec>): PatternAt[] {
  const out: PatternAt[] = [];
  const at = (field: string, source: unknown, everything?: string) => {
    if (typeof source === 'string') out.push({ field, source, everything });
  };
  const each = (value: unknown, field: string, everything?: string) => {
    if (Array.isArray(value)) value.forEach((p, i) => at(`${field}.${i}`, p, everything));
  };
  const t = spec as Partial<Record<keyof TemplateSpec, unknown>>;
  at('prompt', t.prompt, ANY_OUTPUT);
  if (isMapping(t.enable)) {
    at('enable.password_prompt', t.enable.password_prompt, ANY_OUTPUT);
    at('enable.prompt', t.enable.prompt, ANY_OUTPUT);
  }
  each(t.strip_patterns, 'strip_patterns', 'matches every line (an empty or ".*"-like pattern would drop the whole configuration)');
  each(t.ignore_patterns, 'ignore_patterns', 'matches every line (an empty or ".*"-like pattern would hide every change)');
  if (Array.isArray(t.redact_patterns)) {
    t.redact_patterns.forEach((r: unknown, i) => {
      if (!isMapping(r)) return;
      at(`redact_patterns.${i}.pattern`, r.pattern);
      at(`redact_patterns.${i}.within`, r.within);
    });
  }
  each(t.change_events, 'change_events', 'matches every message, so every syslog line from the device would start a backup');
  const s = t.session;
  if (isMapping(s)) {
    if (Array.isArray(s.pagers)) {
      s.pagers.forEach(
        (p: unknown, i) => isMapping(p) && at(`session.pagers.${i}.pattern`, p.pattern, 'matches every line, so every line would be answered as a pager'),
      );
    }
    for (const f of ['username_prompt', 'password_prompt'] as const)
      at(`session.${f}`, s[f], 'matches every line, so every line would be taken for that login question');
    for (const f of SESSION_PATTERN_LISTS) each(s[f], `session.${f}`, `matches every line, so ${EVERY_LINE[f]}`);
  }
  if (isMapping(t.detect)) {
    const matchesAll = 'matches every line, so every device would be taken for this platform';
    each(t.detect.banner, 'detect.banner', matchesAll);
    each(t.detect.prompt, 'detect.prompt', matchesAll);
    if (isMapping(t.detect.probe)) each(t.detect.probe.patterns, 'detect.probe.patterns', matchesAll);
  }
  for (const [command, rule] of Object.entries(isMapping(t.command_output) ? t.command_output : {})) {
    if (!isMapping(rule)) continue;
    at(`command_output.${command}.start_after`, rule.start_after);
    at(`command_output.${command}.stop_before`, rule.stop_before, 'matches every line, so the output would be cut before its first line');
  }
  return out;
}

let builtinSources: ReadonlySet<string> | null = null;

/**
 * True for a pattern written in a built-in template: trusted code, reviewed with the templates, which may use
 * JavaScript-only syntax (lookaround, backreferences). A custom template copied from a built-in keeps them.
 */
export function isBuiltinPattern(source: string): boolean {
  builtinSources ??= new Set(builtinTemplates().flatMap((t) => templatePatterns(t).map((p) => p.source)));
  return builtinSources.has(source);
}

/**
 * Every saved pattern the engine cannot run (custom templates saved before patterns were RE2), by field
 * ("strip_patterns.2", "enable.prompt"), with RE2's reason. `db check` and the template page report them.
 */
export function patternProblems(spec: Partial<TemplateSpec>): { field: string; problem: string }[] {
  const out: { field: string; problem: string }[] = [];
  for (const { field, source } of templatePatterns(spec)) {
    if (!source || isBuiltinPattern(source)) continue;
    const problem = re2Problem(source);
    if (problem !== null) out.push({ field, problem });
  }
  return out;
}

/** A pattern as it runs: JavaScript for built-in sources, RE2 (linear time) for everything else. */
function runnable(source: string): { test(line: string): boolean } {
  return isBuiltinPattern(source) ? trustedPattern(source) : re2LinePattern(source);
}

/** A sample of unrelated lines: a pattern matching all of them matches every line. */
const SAMPLE_LINES = ['', 'hostname core-sw1', ' ip address 10.0.0.1 255.255.255.0', '}', '#'];

function matchesEveryLine(source: string): boolean {
  const re = runnable(source);
  return SAMPLE_LINES.every((line) => re.test(line));
}

/** Only the template's own fields (a stored template carries its id, source and counts besides), in the schema's order. */
export function templateFieldsOf(t: TemplateSpec): TemplateSpec {
  const out: Partial<Record<keyof TemplateSpec, unknown>> = {};
  for (const field of TEMPLATE_FIELDS) if (t[field] !== undefined) out[field] = t[field];
  return out as TemplateSpec;
}

/** The optional parts of a template (session, command_output, aliases, detect). */
export type OptionalSettings = Pick<TemplateSpec, 'session' | 'command_output' | 'aliases' | 'detect'>;

/**
 * A template's optional parts with a fixed key order and the empty ones left out, so equal settings give equal
 * stored text (built-in sync compares it) and audit diffs show real changes only.
 */
export function optionalSettings(spec: OptionalSettings): OptionalSettings {
  const out: OptionalSettings = {};
  const kept = <T extends object>(o: T): T | undefined => {
    const entries = Object.entries(o).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
    return entries.length > 0 ? (Object.fromEntries(entries) as T) : undefined;
  };
  const s = spec.session;
  const session =
    s &&
    kept({
      pagers: s.pagers?.map((p) => ({ pattern: p.pattern, answer: p.answer, ...(p.quiet ? { quiet: true } : {}) })),
      username_prompt: s.username_prompt,
      password_prompt: s.password_prompt,
      enable_refused: s.enable_refused,
      command_errors: s.command_errors,
      press_enter: s.press_enter,
    });
  if (session) out.session = session;
  const rules = Object.entries(spec.command_output ?? {}).map(([command, r]): [string, OutputRule] => [
    command,
    kept({ start_after: r.start_after, stop_before: r.stop_before, drop_first: r.drop_first, drop_last: r.drop_last }) ?? {},
  ]);
  if (rules.length > 0) out.command_output = Object.fromEntries(rules);
  const aliases = spec.aliases && kept({ oxidized: spec.aliases.oxidized, rancid: spec.aliases.rancid });
  if (aliases) out.aliases = aliases;
  const d = spec.detect;
  const probe = d?.probe && { command: d.probe.command, patterns: d.probe.patterns };
  const detect = d && kept({ priority: d.priority, banner: d.banner, prompt: d.prompt, probe });
  if (detect) out.detect = detect;
  return out;
}
