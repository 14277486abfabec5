// Request and response schemas of the backup-template endpoints (the OpenAPI components), and the response converter.
import { z } from '@hono/zod-openapi';
import { TEMPLATE_LIMITS } from '../../templates/index';
import { SessionSchema, TemplateFileSchema, TemplateSpecSchema } from '../../templates/schema';
import { paginationQuery, pagedSchema, queryBoolean } from '../../http/openapi';
import { textSchema } from '../../lib/names';
import { formatTimestamp } from '../../lib/time';
import type { Template } from './templates.store';
import { specFields } from './templates.service';

const L = TEMPLATE_LIMITS;

// The fields are the one template schema's (src/templates/schema.ts): the API adds component names only. Shapes and
// sizes are checked at the door; RE2 syntax and match-everything patterns by validateTemplate in the service, whose
// errors come back as the same 422 field list.
const named = { session: SessionSchema.openapi('TemplateSession').optional() };

export const TemplateCreateSchema = TemplateFileSchema.extend(named).openapi('TemplateCreate', {
  description: 'A new custom template. Only name, vendor and commands are required. Unknown fields are refused (422).',
});

export const TemplateUpdateSchema = TemplateSpecSchema.extend(named).partial().strict().openapi('TemplateUpdate', {
  description: 'Fields to change; omitted fields keep their value and the result is validated as a whole. Built-in templates cannot be updated (409).',
});

const timestamp = (what: string) =>
  z.string().openapi({ description: `${what}, "YYYY-MM-DD HH:MM:SS" in the request time zone`, example: '2025-03-01 14:05:09' });

export const TemplateSchema = z
  .object({
    id: z.number().int().openapi({ example: 15 }),
    ...TemplateSpecSchema.extend(named).shape,
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
