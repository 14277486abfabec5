// Request and response schemas of the device API (they generate its OpenAPI components) and the response DTO mapping.
import { isIP } from 'node:net';
import { z } from '@hono/zod-openapi';
import { pagedSchema, paginationQuery } from '../../http/openapi';
import { NAME_RULES } from '../../lib/names';
import { formatNullable, formatTimestamp } from '../../lib/time';
import type { Device } from './devices.service';
import { RecordZoneSchema } from '../collectors/collectors.schemas';
import { BoolQuery, DescriptionSchema, IntQuery, NameSchema, RefIdSchema, ScheduleSchema, SearchQuery, TimestampSchema } from './shared.schemas';

const PROTOCOLS = ['ssh', 'telnet'] as const;
const REACHABILITY = ['reachable', 'unreachable', 'unknown'] as const;

const DNS_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** An IPv4/IPv6 address, or a DNS name of letter-digit-hyphen labels whose last label is not all digits. */
export function isValidHostname(host: string): boolean {
  if (isIP(host)) return true;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  // An all-numeric last label would make "300.1.1.1" a "name"; such text is a mistyped address.
  return labels.every((l) => DNS_LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]);
}

const HostnameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(253, 'at most 253 characters')
  .refine(isValidHostname, 'must be an IPv4 or IPv6 address or a DNS name')
  .openapi({
    description:
      'IPv4 or IPv6 address, or DNS name (labels of letters, digits and hyphens, 1-63 characters each, at most 253 in all, an optional ' +
      'trailing dot; the last label not all digits, so "300.1.1.1" is refused as a mistyped address). No scheme, port or path: the port ' +
      'is its own field. A name is resolved at each backup.',
    example: 'core1.ber.example.net',
  });

export const ProtocolSchema = z.enum(PROTOCOLS).openapi({ description: 'Transport used for backups', example: 'ssh' });
export const ReachabilityStatusSchema = z.enum(REACHABILITY).openapi({ example: 'reachable' });

const ReachabilitySchema = z
  .object({
    status: ReachabilityStatusSchema,
    checked_at: TimestampSchema.nullable().openapi({ description: 'Last contact attempt; null before the first' }),
    error: z.string().nullable().openapi({ description: 'Why the last attempt failed; null unless status is unreachable', example: null }),
  })
  .openapi('DeviceReachability', { description: 'Outcome of the last backup or reachability probe' });

const LastBackupSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid', example: '0b6f8a51-3f7d-4c56-9c57-4f1f0b8e2a11' }),
    started_at: TimestampSchema,
    success: z.boolean(),
  })
  .openapi('DeviceLastBackup', { description: 'The most recent backup record; its content is at /backups/{id}/content' });

const RetiredSchema = z
  .object({
    at: TimestampSchema,
    by: z.string().nullable().openapi({ description: 'The user (or API key owner, or OS user) who retired it', example: 'alice' }),
  })
  .openapi('DeviceRetired', {
    description:
      'A retired device keeps its backup records (listed, readable, searchable, diffable) but is never backed up: off every schedule, ' +
      'event backup and probe, and out of the problem lists, until it is reactivated',
  });

export const DeviceSchema = z
  .object({
    id: z.number().int().openapi({ example: 17 }),
    name: z.string().openapi({ example: 'core1-ber' }),
    hostname: z.string().openapi({ example: 'core1.ber.example.net' }),
    port: z.number().int().openapi({ example: 22 }),
    protocol: ProtocolSchema,
    group_id: z.number().int().nullable().openapi({ description: 'null: ungrouped (visible only to keys with scope "all")', example: 3 }),
    credential_id: z.number().int().openapi({ example: 1 }),
    template_id: z.number().int().openapi({ example: 4 }),
    enabled: z.boolean().openapi({ description: 'Disabled devices are kept but never backed up' }),
    description: z.string(),
    schedule: z.string().nullable().openapi({ description: 'Cron override; null: the group’s, else the appliance’s schedule', example: null }),
    accept_host_key_change: z.boolean().openapi({
      description:
        'True while a user has approved the one changed SSH host key the device offered; the next backup accepts that fingerprint only, then this resets to false',
    }),
    host_key: z.string().nullable().openapi({
      description: 'Recorded SSH host key fingerprint; null until the first SSH contact',
      example: 'SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8',
    }),
    reachability: ReachabilitySchema,
    last_backup: LastBackupSchema.nullable(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    retired: RetiredSchema.nullable().openapi({ description: 'null while the device is in service' }),
    zone: RecordZoneSchema,
  })
  .openapi('Device');

export type DeviceDto = z.infer<typeof DeviceSchema>;

export function toDeviceDto(d: Device, tz: string): DeviceDto {
  return {
    ...d,
    reachability: { ...d.reachability, checked_at: formatNullable(d.reachability.checked_at, tz) },
    last_backup: d.last_backup && { ...d.last_backup, started_at: formatTimestamp(d.last_backup.started_at, tz) },
    created_at: formatTimestamp(d.created_at, tz),
    updated_at: formatTimestamp(d.updated_at, tz),
    retired: d.retired && { ...d.retired, at: formatTimestamp(d.retired.at, tz) },
  };
}

export const DevicePageSchema = pagedSchema(DeviceSchema, 'DevicePage');

const PORT_RANGE = 'Port must be between 1 and 65535';

/** Body fields, shared by create (with defaults) and update (all optional, no defaults). */
const fields = {
  name: NameSchema.openapi({ description: `Unique across all devices, 1-128 characters. ${NAME_RULES}`, example: 'core1-ber' }),
  hostname: HostnameSchema,
  port: z
    .number()
    .int(PORT_RANGE)
    .min(1, PORT_RANGE)
    .max(65535, PORT_RANGE)
    .openapi({ description: 'TCP port; default 22 for ssh, 23 for telnet', example: 22 }),
  protocol: ProtocolSchema,
  group_id: RefIdSchema.nullable().openapi({ description: 'Group (must exist); null: ungrouped', example: 3 }),
  credential_id: RefIdSchema.openapi({ description: 'Credential used to log in (must exist)', example: 1 }),
  template_id: RefIdSchema.openapi({ description: 'Backup template (must exist)', example: 4 }),
  enabled: z.boolean(),
  description: DescriptionSchema,
  schedule: ScheduleSchema.nullable().openapi({
    description: 'Cron override for this device; null: inherit from its group or the appliance',
    example: '30 4 * * 1-5',
  }),
  accept_host_key_change: z.boolean().openapi({
    description:
      'true: approve the fingerprint the device offered at its latest HOST_KEY_CHANGED backup (exactly that key, once; 409 CONFLICT when none was offered). false: withdraw an approval. No effect on create (the first key seen is recorded).',
  }),
  zone: RecordZoneSchema,
};

export const DeviceCreateSchema = z
  .object({
    name: fields.name,
    hostname: fields.hostname,
    port: fields.port.optional(),
    protocol: fields.protocol.default('ssh'),
    group_id: fields.group_id.default(null),
    credential_id: fields.credential_id,
    template_id: fields.template_id,
    enabled: fields.enabled.default(true),
    description: fields.description.default(''),
    schedule: fields.schedule.default(null),
    accept_host_key_change: fields.accept_host_key_change.default(false),
    zone: fields.zone.default(null),
  })
  .strict();

/** The API's create request: DeviceCreateSchema, but template_id and credential_id may be "auto" (detected at the address first). */
export const DeviceCreateRequestSchema = DeviceCreateSchema.extend({
  credential_id: z.union([fields.credential_id, z.literal('auto')]).openapi({
    description:
      'Credential used to log in (must exist); "auto": the first that logs in of the credentials the caller may use for this group (the device\'s own first, at most backup.detect_max_tries tried)',
    example: 1,
  }),
  template_id: z.union([fields.template_id, z.literal('auto')]).openapi({
    description:
      'Backup template (must exist); "auto": detected by logging in and matching each template\'s detect patterns (login banner, prompt, a read-only probe such as show version). Nothing detected: 422 on this field with the reason',
    example: 4,
  }),
})
  .strict()
  .openapi('DeviceCreate');

export const DeviceUpdateSchema = z
  .object({
    name: fields.name.optional(),
    hostname: fields.hostname.optional(),
    port: fields.port.optional(),
    protocol: fields.protocol.optional(),
    group_id: fields.group_id.optional(),
    credential_id: fields.credential_id.optional(),
    template_id: fields.template_id.optional(),
    enabled: fields.enabled.optional(),
    description: fields.description.optional(),
    schedule: fields.schedule.optional(),
    accept_host_key_change: fields.accept_host_key_change.optional(),
    zone: fields.zone.optional(),
  })
  .strict()
  .openapi('DeviceUpdate', {
    description: 'Partial update: only the fields present change; `null` clears a nullable field. host_key and reachability are read-only.',
  });

export const DeviceListQuerySchema = z.object({
  ...paginationQuery(),
  q: SearchQuery.openapi({ description: 'Case-insensitive substring of the name or hostname', example: 'ber' }),
  group_id: IntQuery('group_id').openapi({ description: 'Devices in this group or any of its subgroups', example: 3 }),
  enabled: BoolQuery().openapi({ description: 'Only enabled (`true`) or only disabled (`false`) devices', example: true }),
  protocol: ProtocolSchema.optional().openapi({ description: 'Only devices backed up over this protocol' }),
  reachability: ReachabilityStatusSchema.optional().openapi({ description: 'Only devices with this reachability status', example: 'unreachable' }),
  retired: BoolQuery().openapi({ description: 'Only retired (`true`) or only in-service (`false`) devices; unset: both', example: false }),
});

export const DevicePageQuerySchema = z.object({ ...paginationQuery() });
