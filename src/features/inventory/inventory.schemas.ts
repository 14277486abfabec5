// Schemas of inventory sources (one shape each: the API, the CLI and the stored JSON all read them); the token goes in, never out.
import { z } from '@hono/zod-openapi';
import { IntIdParam, MAX_ID, queryBoolean } from '../../http/openapi';

export const SOURCE_KINDS = ['netbox', 'nautobot', 'http'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** The placeholders a group path may use; each is the name of that object in the source (empty: left out). */
export const GROUP_PATH_FIELDS = ['region', 'site', 'location', 'tenant', 'role', 'group'] as const;

const names = z.array(z.string().min(1).max(100)).max(50);

export const FiltersSchema = z
  .object({ site: names.optional(), role: names.optional(), tag: names.optional(), status: names.optional() })
  .strict()
  .openapi('InventoryFilters', {
    description: 'NetBox/Nautobot query filters (slugs; several values of one filter: any of them)',
    example: { site: ['ams1'], status: ['active'] },
  });
export type Filters = z.infer<typeof FiltersSchema>;

/** Oxidized's `http` source `map`: which key of each object holds what (dotted paths reach nested keys). */
export const FieldsSchema = z
  .object({
    name: z.string().min(1).max(100).default('name'),
    ip: z.string().min(1).max(100).default('ip'),
    model: z.string().min(1).max(100).default('model'),
    group: z.string().min(1).max(100).default('group'),
  })
  .strict()
  .openapi('InventoryFields', { description: 'http sources only: the keys holding name, ip, model and group (Oxidized’s `map`)' });

export const MappingSchema = z
  .object({
    platform_map: z
      .record(z.string().min(1).max(100), z.string().min(1).max(128))
      .default({})
      .openapi({ description: 'Platform slug or name (http: the model) -> template name', example: { 'cisco-ios': 'cisco-ios', junos: 'juniper-junos' } }),
    default_template: z
      .string()
      .min(1)
      .max(128)
      .nullable()
      .default(null)
      .openapi({ description: 'The template of a device whose platform is not in platform_map; null: such a device is skipped (listed in the plan)' }),
    group_path: z.string().max(300).default('{site}').openapi({
      description:
        'Group path of the devices, e.g. `{region}/{site}`; placeholders: {region} {site} {location} {tenant} {role}, and {group} (http sources); empty: ungrouped',
    }),
    hostname_from: z
      .enum(['primary_ip', 'name'])
      .default('primary_ip')
      .openapi({ description: 'primary_ip: the primary IP address (the device name when it has none); name: the device name' }),
    fields: FieldsSchema.optional(),
  })
  .strict();
export type Mapping = z.infer<typeof MappingSchema>;

export const SourceInputSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" or "-", 1-64 characters')
      .openapi({ example: 'netbox-prod' }),
    kind: z.enum(SOURCE_KINDS),
    url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\//, 'an http:// or https:// URL')
      .openapi({
        description: 'netbox/nautobot: the base URL (…/api/dcim/devices/ is appended); http: the URL of the JSON list',
        example: 'https://netbox.example.net',
      }),
    token: z.string().min(1).max(4096).optional().openapi({ description: 'API token (sent as `Authorization: Token …`). Stored encrypted, never returned.' }),
    credential_id: z.number().int().min(1).max(MAX_ID).openapi({ description: 'The credential of the devices the source creates' }),
    filters: FiltersSchema.default({}),
    interval_minutes: z
      .number()
      .int()
      .min(5)
      .max(10080)
      .nullable()
      .default(null)
      .openapi({ description: 'Scheduled sync inside `serve` every so many minutes; null: on demand only' }),
  })
  .merge(MappingSchema)
  .strict()
  .openapi('InventorySourceInput', {
    example: {
      name: 'netbox-prod',
      kind: 'netbox',
      url: 'https://netbox.example.net',
      token: '0123456789abcdef0123456789abcdef01234567',
      credential_id: 1,
      filters: { site: ['ams1'], status: ['active'] },
      platform_map: { 'cisco-ios': 'cisco-ios' },
      default_template: null,
      group_path: '{region}/{site}',
      hostname_from: 'primary_ip',
      interval_minutes: 60,
    },
  });
export type SourceInput = z.infer<typeof SourceInputSchema>;

/** A change: every field optional, `token: null` removes the token. */
export const SourcePatchSchema = SourceInputSchema.partial()
  .omit({ name: true })
  .extend({ token: z.string().min(1).max(4096).nullable().optional() })
  .strict()
  .openapi('InventorySourcePatch');
export type SourcePatch = z.infer<typeof SourcePatchSchema>;

export const SourceSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(SOURCE_KINDS),
    url: z.string(),
    has_token: z.boolean(),
    credential_id: z.number().int().nullable(),
    filters: FiltersSchema,
    interval_minutes: z.number().int().nullable(),
    devices: z.number().int().openapi({ description: 'Devices linked to the source (in service or retired)' }),
    last_sync_at: z.string().nullable(),
    last_sync_error: z.string().nullable(),
  })
  .merge(MappingSchema)
  .openapi('InventorySource');

export const SourceListSchema = z.object({ items: z.array(SourceSchema) }).openapi('InventorySourceList');

const change = z.object({ before: z.unknown(), after: z.unknown() });
export const PlanSchema = z
  .object({
    source: z.string(),
    dry_run: z.boolean(),
    fetched: z.number().int().openapi({ description: 'Devices the source listed (after its filters)' }),
    creates: z.array(z.object({ external_id: z.string(), name: z.string(), hostname: z.string(), template: z.string(), group_path: z.string() })),
    updates: z.array(z.object({ device_id: z.number().int(), external_id: z.string(), name: z.string(), changes: z.record(z.string(), change) })),
    retirements: z.array(z.object({ device_id: z.number().int(), name: z.string() })),
    reactivations: z.array(z.object({ device_id: z.number().int(), name: z.string() })),
    skipped: z.array(z.object({ external_id: z.string(), name: z.string(), reason: z.string() })),
    unchanged: z.number().int(),
  })
  .openapi('InventorySyncPlan');
export type Plan = z.infer<typeof PlanSchema>;

export const SourceIdParams = z.object({ source_id: IntIdParam('source_id') });
/** A sync's body: an empty object (request bodies are JSON); the choice is the query's `dry_run`. */
export const SyncBody = z.object({}).strict().openapi('SyncInventorySource', { example: {} });

export const SyncQuery = z.object({
  dry_run: queryBoolean().openapi({ description: 'true: return the plan without writing anything' }),
});
