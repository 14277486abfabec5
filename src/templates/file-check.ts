// The checks a template file passes before it is loaded: YAML that is a mapping, then validateTemplate (the one schema and the semantic checks).
import { TemplateFileError, parseTemplateYaml } from './files';
import { validateTemplate, type TemplateFieldError } from './index';
import type { TemplateSpec } from './types';

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
  const errors = validateTemplate(spec);
  return { spec: errors.length ? null : spec, errors };
}
