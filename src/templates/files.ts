// Templates as YAML files: the built-in library (src/templates/builtin/*.yaml, carried in the executable as assets) and the parser every template file goes through.
import { parse } from 'yaml';
import { listAssets, readAsset } from '../runtime/assets';
import type { TemplateSpec } from './types';

export const BUILTIN_FOLDER = 'src/templates/builtin';

/** A template file that is not YAML or not a mapping; field-level problems are validateTemplate's. */
export class TemplateFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'TemplateFileError';
  }
}

/**
 * The template a YAML text describes, with the optional fields filled in as the schema's defaults say (empty
 * lists, null prompt/enable/exit, shell mode, redaction on). Field values are not checked here: run
 * validateTemplate on the result before using it.
 */
export function parseTemplateYaml(text: string, file: string): TemplateSpec {
  let data: unknown;
  try {
    data = parse(text, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new TemplateFileError(file, `not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new TemplateFileError(file, 'must be a mapping of template fields');
  const d = data as Record<string, unknown>;
  return {
    mode: 'shell',
    description: '',
    prompt: null,
    pre_commands: [],
    enable: null,
    strip_patterns: [],
    ignore_patterns: [],
    redact_patterns: [],
    change_events: [],
    redact: true,
    exit_command: null,
    ...d,
  } as unknown as TemplateSpec;
}

/** The built-in templates in file-name order. A broken built-in file stops the process: it is a release bug. */
export function loadBuiltinTemplates(): TemplateSpec[] {
  return listAssets(BUILTIN_FOLDER)
    .filter((n) => n.endsWith('.yaml'))
    .map((n) => parseTemplateYaml(readAsset(n).toString('utf8'), n));
}
