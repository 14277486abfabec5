// What a device's CLI looks like to the session driver: the template's session knowledge, then the engine defaults, compiled.
import type { LinePattern } from '../lib/re2';
import { engineDefaults, trustedPattern } from '../templates/defaults';
import { compilePattern } from '../templates/patterns';
import type { TemplateSpec } from '../templates/types';

/** A line the driver answers while it waits: a pager, or a line that wants Enter (`answer` null: the session's newline). */
export interface PagerPattern {
  re: LinePattern;
  answer: string | null;
  /** Answer only once the output has been quiet a moment. */
  quiet: boolean;
}

/** Compiled session knowledge: a template's own values first, the engine defaults after them. */
export interface SessionVocabulary {
  /** Shape of a prompt, for templates without a prompt pattern. */
  prompt: LinePattern;
  pagers: readonly PagerPattern[];
  username: readonly LinePattern[];
  password: readonly LinePattern[];
  enableRefused: readonly LinePattern[];
  commandErrors: readonly LinePattern[];
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A template regex, or the literal text when the regex does not compile (a template bug must not stop backups). */
export function safePattern(source: string): LinePattern {
  try {
    return compilePattern(source);
  } catch {
    return new RegExp(escapeRegex(source.trim()) + '\\s*$');
  }
}

function vocabulary(s: NonNullable<TemplateSpec['session']>, compile: (source: string) => LinePattern, d?: SessionVocabulary): SessionVocabulary {
  const list = (sources: readonly string[] | undefined) => (sources ?? []).map(compile);
  const one = (source: string | undefined) => (source ? [compile(source)] : []);
  const pagers: PagerPattern[] = [
    ...(s.pagers ?? []).map((p) => ({ re: compile(p.pattern), answer: p.answer, quiet: p.quiet === true })),
    ...list(s.press_enter).map((re) => ({ re, answer: null, quiet: false })),
  ];
  return {
    prompt: d?.prompt ?? trustedPattern(engineDefaults().generic_prompt),
    pagers: [...pagers, ...(d?.pagers ?? [])],
    username: [...one(s.username_prompt), ...(d?.username ?? [])],
    password: [...one(s.password_prompt), ...(d?.password ?? [])],
    enableRefused: [...list(s.enable_refused), ...(d?.enableRefused ?? [])],
    commandErrors: [...list(s.command_errors), ...(d?.commandErrors ?? [])],
  };
}

let defaults: SessionVocabulary | undefined;

/** The engine defaults alone (src/templates/defaults.yaml), compiled once. */
export function defaultVocabulary(): SessionVocabulary {
  return (defaults ??= vocabulary(engineDefaults(), trustedPattern));
}

/** The session knowledge a backup with `template` uses: the template's `session` values tried before the defaults. */
export function sessionVocabulary(template: Pick<TemplateSpec, 'session'>): SessionVocabulary {
  const base = defaultVocabulary();
  return template.session ? vocabulary(template.session, safePattern, base) : base;
}

/** True when any of `patterns` matches `line`. */
export function matchesAny(patterns: readonly LinePattern[], line: string): boolean {
  return patterns.some((re) => re.test(line));
}
