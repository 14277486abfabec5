// The engine defaults (src/templates/defaults.yaml): the prompts, pagers and refusal lines every template gets after its own.
import { parse } from 'yaml';
import { readAsset } from '../runtime/assets';
import { SessionSchema } from './schema';
import type { PagerRule, SessionKnowledge } from './types';

export const DEFAULTS_ASSET = 'src/templates/defaults.yaml';

/** Every session field filled in, plus the shape of a prompt for templates that give none. */
export interface EngineDefaults {
  generic_prompt: string;
  pagers: PagerRule[];
  username_prompt: string;
  password_prompt: string;
  enable_refused: string[];
  command_errors: string[];
  press_enter: string[];
}

/** The session fields a template may set (the template schema's). */
const SESSION_FIELDS = Object.keys(SessionSchema.shape);

/** The session fields that hold a list of line patterns. */
export const SESSION_PATTERN_LISTS = ['enable_refused', 'command_errors', 'press_enter'] as const satisfies readonly (keyof SessionKnowledge)[];

/**
 * A pattern written in shipped code (a built-in template, the defaults) as a JavaScript regex. A leading "(?i)", RE2's
 * way of saying case-insensitive, becomes the "i" flag, which Node 20's regex syntax has no inline form for.
 */
export function trustedPattern(source: string): RegExp {
  return source.startsWith('(?i)') ? new RegExp(source.slice(4), 'i') : new RegExp(source);
}

/** Parses and checks the defaults file; a broken one is a release bug, so this throws naming the field. */
export function parseEngineDefaults(text: string, file = DEFAULTS_ASSET): EngineDefaults {
  const bad = (what: string): never => {
    throw new Error(`${file}: ${what}`);
  };
  const data: unknown = parse(text, { uniqueKeys: true });
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return bad('must be a mapping');
  const d = data as Record<string, unknown>;
  const known = new Set<string>(['generic_prompt', ...SESSION_FIELDS]);
  for (const key of Object.keys(d)) if (!known.has(key)) bad(`unknown field "${key}"`);
  const pattern = (value: unknown, field: string): string => {
    if (typeof value !== 'string' || value === '') return bad(`${field} must be a pattern`);
    try {
      trustedPattern(value);
    } catch (err) {
      bad(`${field} does not compile: ${err instanceof Error ? err.message : String(err)}`);
    }
    return value;
  };
  const list = (field: string): string[] => {
    const v = d[field];
    if (!Array.isArray(v)) return bad(`${field} must be a list of patterns`);
    return v.map((p, i) => pattern(p, `${field}.${i}`));
  };
  if (!Array.isArray(d.pagers)) bad('pagers must be a list');
  const pagers = (d.pagers as unknown[]).map((p, i): PagerRule => {
    const r = (typeof p === 'object' && p !== null ? p : bad(`pagers.${i} must be a mapping`)) as Record<string, unknown>;
    if (typeof r.answer !== 'string' || r.answer === '') bad(`pagers.${i}.answer must be text`);
    if (r.quiet !== undefined && typeof r.quiet !== 'boolean') bad(`pagers.${i}.quiet must be true or false`);
    return { pattern: pattern(r.pattern, `pagers.${i}.pattern`), answer: r.answer as string, ...(r.quiet ? { quiet: true } : {}) };
  });
  return {
    generic_prompt: pattern(d.generic_prompt, 'generic_prompt'),
    pagers,
    username_prompt: pattern(d.username_prompt, 'username_prompt'),
    password_prompt: pattern(d.password_prompt, 'password_prompt'),
    enable_refused: list('enable_refused'),
    command_errors: list('command_errors'),
    press_enter: list('press_enter'),
  };
}

let loaded: EngineDefaults | undefined;

/** The shipped defaults, read once on first use. */
export function engineDefaults(): EngineDefaults {
  return (loaded ??= Object.freeze(parseEngineDefaults(readAsset(DEFAULTS_ASSET).toString('utf8'))));
}
