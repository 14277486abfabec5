// schema/template.schema.json, generated from the one template schema (schema.ts): `npm run gen:schema` writes it, and a test fails while the committed file differs.
import { z } from 'zod';
import { TemplateFileSchema } from './schema';

/** The JSON Schema of a template file, as editors read it (yaml-language-server) and as the appliance serves it. */
export function templateJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(TemplateFileSchema, { io: 'input', target: 'draft-2020-12' });
  return {
    $schema,
    title: 'confvault backup template',
    description:
      "One backup template: how to pull and clean one platform's configuration. Built-ins are src/templates/builtin/*.yaml; custom template files go in " +
      '<data_dir>/templates/*.yaml (loaded at start, on `confvault template reload` and on SIGHUP to `confvault serve`). `confvault template validate FILE` ' +
      'runs these checks and more (patterns must compile as RE2 and must not match every line). An appliance serves this schema at ' +
      '/schema/template.schema.json, for an editor modeline: # yaml-language-server: $schema=https://<appliance>/schema/template.schema.json',
    ...rest,
  };
}

/** The file's text: two-space JSON and a final newline. */
export function templateJsonSchemaText(): string {
  return `${JSON.stringify(templateJsonSchema(), null, 2)}\n`;
}
