// Schemas of the public API's collectors, enrolment tokens and zones (docs/collectors.md): one shape each, the types derived from them.
import { z } from '@hono/zod-openapi';
import { pagedSchema, paginationQuery } from '../../http/openapi';
import { TimestampSchema } from '../devices/shared.schemas';

/** A zone's name (and a collector's): the one rule of every door. */
export const ZONE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const ZONE_RULE = 'letters, digits, "_", "." and "-", starting with a letter or digit, at most 64';

export const ZoneNameSchema = z
  .string()
  .regex(ZONE_PATTERN, ZONE_RULE)
  .openapi({ description: `A remote zone, served by its collectors: ${ZONE_RULE}`, example: 'branch-7' });

/** The zone of a device or a group: a remote zone's name, or null for the central appliance. */
export const RecordZoneSchema = ZoneNameSchema.nullable().openapi({
  description:
    `The remote zone whose collectors back it up (${ZONE_RULE}); null: none of its own, so the central appliance does, unless a group ` +
    'up the tree names a zone (a device without a zone follows its nearest group that has one). Changing it needs `collectors.manage` ' +
    'and the device-group scope all as well (403 `PERMISSION_DENIED` otherwise); writing back the zone a record has needs neither.',
  example: null,
});

export const CollectorSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    zone: z.string(),
    version: z.string().nullable(),
    enrolled_at: z.string(),
    last_seen_at: z.string().nullable(),
    state: z.enum(['online', 'offline', 'revoked']).openapi({ description: 'offline: not seen for `[collector] offline_after` seconds' }),
    queued: z.number().int().openapi({ description: "Backups of the collector's zone waiting for a collector" }),
    leased: z.number().int().openapi({ description: "Backups of the collector's zone leased to one of its collectors" }),
    stored_last_hour: z.number().int().openapi({ description: 'Results this collector delivered in the last hour' }),
    stored_total: z.number().int(),
  })
  .openapi('Collector');

export const CollectorListSchema = pagedSchema(CollectorSchema, 'CollectorList');
export const CollectorListQuerySchema = z.object({ ...paginationQuery() });

export const CollectorUpdateSchema = z
  .object({ zone: ZoneNameSchema })
  .strict()
  .openapi('CollectorUpdate', { description: 'The zone the collector serves from its next lease on.' });

const TokenIdSchema = z
  .string()
  .openapi({ description: 'The token’s public id (16 hex digits of its hash); the token itself is never shown again', example: '3f9a0c51d2e4b7a8' });

export const EnrolTokenSchema = z
  .object({
    id: TokenIdSchema,
    zone: z.string().openapi({ example: 'branch-7' }),
    created_by: z.string().openapi({ example: 'admin' }),
    created_at: TimestampSchema,
    expires_at: TimestampSchema,
    used_at: TimestampSchema.nullable().openapi({ description: 'When a collector enrolled with it; null while unused' }),
    collector_id: z.number().int().nullable().openapi({ description: 'The collector it enrolled; null while unused' }),
    state: z.enum(['valid', 'used', 'expired']),
  })
  .openapi('EnrolToken');

export const EnrolTokenPageSchema = pagedSchema(EnrolTokenSchema, 'EnrolTokenPage');

export const EnrolTokenCreateSchema = z
  .object({
    zone: ZoneNameSchema,
    hours: z.number().int().min(1).max(720).default(24).openapi({ description: 'Hours the token stays valid, 1-720', example: 24 }),
  })
  .strict()
  .openapi('EnrolTokenCreate');

export const EnrolTokenCreatedSchema = z
  .object({
    id: TokenIdSchema,
    zone: z.string().openapi({ example: 'branch-7' }),
    token: z.string().openapi({
      description: 'The one-time token, shown in this answer only (only its hash is stored): give it to `confvault collector enrol` at the site',
      example: 'cvc_Zr0…',
    }),
    expires_at: TimestampSchema,
  })
  .openapi('EnrolTokenCreated');

export const TokenIdParams = z.object({
  token_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/, 'token_id must be 16 lower-case hex digits')
    .openapi({ param: { name: 'token_id', in: 'path' }, example: '3f9a0c51d2e4b7a8' }),
});
