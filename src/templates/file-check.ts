// The checks a template file passes before it is loaded: no unknown field (a typo must not be ignored), the shape of session and command_output, then validateTemplate.
import { TEMPLATE_FIELDS, TemplateFileError, parseTemplateYaml } from './files';
import { validateTemplate, type TemplateFieldError } from './index';
import type { TemplateSpec } from './types';

const SESSION_LISTS = ['enable_refused', 'command_errors', 'press_enter'] as const;
const SESSION_FIELDS: ReadonlySet<string> = new Set(['pagers', 'username_prompt', 'password_prompt', ...SESSION_LISTS]);
const OUTPUT_FIELDS: ReadonlySet<string> = new Set(['start_after', 'stop_before', 'drop_first', 'drop_last']);

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * A template file's text checked as a whole: the template it describes when it is usable, and every problem by
 * field ("file" for a file that is not YAML or not a mapping). The same list `template validate` prints, the API
 * returns as a 422 and a reload reports.
 */
export function checkTemplateText(text: string, file: string): { spec: TemplateSpec | null; errors: TemplateFieldError[] } {
  let spec: TemplateSpec;
  try {
    spec = parseTemplateYaml(text, file);
  } catch (err) {
    if (err instanceof TemplateFileError) return { spec: null, errors: [{ field: 'file', message: err.message.slice(file.length + 2) }] };
    throw err;
  }
  const errors = checkTemplateFields(spec);
  return { spec: errors.length ? null : spec, errors };
}

/** Problems of a parsed template file: unknown fields, session and command_output shapes, and validateTemplate's. */
export function checkTemplateFields(spec: TemplateSpec): TemplateFieldError[] {
  const errors: TemplateFieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field, message });
  const known: ReadonlySet<string> = new Set(TEMPLATE_FIELDS);
  for (const key of Object.keys(spec)) if (!known.has(key)) add(key, `is not a template field (known fields: ${TEMPLATE_FIELDS.join(', ')})`);
  if (spec.session !== undefined) checkSession(spec.session, add);
  if (spec.command_output !== undefined) checkCommandOutput(spec.command_output, spec.commands, add);
  const missing = new Set((['name', 'vendor', 'commands'] as const).filter((f) => (spec as Partial<TemplateSpec>)[f] === undefined));
  for (const f of missing) add(f, 'is required');
  for (const e of validateTemplate(spec)) {
    if (!missing.has(e.field as 'name') && !errors.some((x) => x.field === e.field && x.message === e.message)) errors.push(e);
  }
  return errors;
}

type Add = (field: string, message: string) => void;

function checkSession(session: unknown, add: Add): void {
  if (!isMapping(session)) return add('session', 'must be a mapping');
  for (const key of Object.keys(session)) if (!SESSION_FIELDS.has(key)) add(`session.${key}`, 'is not a session field');
  for (const key of ['username_prompt', 'password_prompt'] as const) {
    if (session[key] !== undefined && !isText(session[key])) add(`session.${key}`, 'must be a non-empty pattern');
  }
  for (const key of SESSION_LISTS) {
    const list = session[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) add(`session.${key}`, 'must be a list');
    else list.forEach((v, i) => isText(v) || add(`session.${key}.${i}`, 'must be a non-empty pattern'));
  }
  const pagers = session.pagers;
  if (pagers === undefined) return;
  if (!Array.isArray(pagers)) return add('session.pagers', 'must be a list');
  pagers.forEach((p, i) => {
    if (!isMapping(p)) return add(`session.pagers.${i}`, 'must be a mapping with pattern and answer');
    for (const key of Object.keys(p)) if (!['pattern', 'answer', 'quiet'].includes(key)) add(`session.pagers.${i}.${key}`, 'is not a pager field');
    if (!isText(p.pattern)) add(`session.pagers.${i}.pattern`, 'must be a non-empty pattern');
    if (typeof p.answer !== 'string') add(`session.pagers.${i}.answer`, 'must be a string');
    if (p.quiet !== undefined && typeof p.quiet !== 'boolean') add(`session.pagers.${i}.quiet`, 'must be true or false');
  });
}

function checkCommandOutput(output: unknown, commands: unknown, add: Add): void {
  if (!isMapping(output)) return add('command_output', 'must be a mapping of capture command to output rule');
  const capture = new Set(Array.isArray(commands) ? commands : []);
  for (const [command, rule] of Object.entries(output)) {
    const at = `command_output.${command}`;
    if (!capture.has(command)) add(at, 'must be one of the template\'s commands, written exactly as in "commands"');
    if (!isMapping(rule)) {
      add(at, 'must be a mapping (start_after, stop_before, drop_first, drop_last)');
      continue;
    }
    for (const key of Object.keys(rule)) if (!OUTPUT_FIELDS.has(key)) add(`${at}.${key}`, 'is not an output rule field');
    for (const key of ['start_after', 'stop_before'] as const)
      if (rule[key] !== undefined && !isText(rule[key])) add(`${at}.${key}`, 'must be a non-empty pattern');
    for (const key of ['drop_first', 'drop_last'] as const) {
      const n = rule[key];
      if (n !== undefined && !(typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 1000)) add(`${at}.${key}`, 'must be a whole number 0-1000');
    }
  }
}
