// Request and response schemas of the group API (they generate its OpenAPI components) and the response DTO mapping.
import { z } from '@hono/zod-openapi';
import { pagedSchema, paginationQuery } from '../../http/openapi';
import { NAME_RULES } from '../../lib/names';
import { formatTimestamp } from '../../lib/time';
import { DescriptionSchema, NameSchema, RefIdSchema, ScheduleSchema, SearchQuery, TimestampSchema } from '../devices/shared.schemas';
import type { Group } from './groups.service';
import { RecordZoneSchema } from '../collectors/collectors.schemas';

export const GroupSchema = z
  .object({
    id: z.number().int().openapi({ example: 3 }),
    name: z.string().openapi({ example: 'Core' }),
    parent_id: z.number().int().nullable().openapi({ description: 'Parent group; null for a top-level group', example: 2 }),
    description: z.string().openapi({ example: 'Core routers, Berlin' }),
    schedule: z.string().nullable().openapi({
      description: 'Cron override for the devices of this group and its subgroups that have no schedule of their own; null: inherit',
      example: '0 3 * * *',
    }),
    path: z.string().openapi({ description: 'Names from the top-level group down to this one, joined by " / "', example: 'Europe / Berlin / Core' }),
    device_count: z
      .number()
      .int()
      .openapi({ description: 'Devices in this group and all its subgroups that are inside the caller’s device-group scope', example: 12 }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    zone: RecordZoneSchema,
  })
  .openapi('Group');

export type GroupDto = z.infer<typeof GroupSchema>;

export function toGroupDto(g: Group, tz: string): GroupDto {
  return { ...g, created_at: formatTimestamp(g.created_at, tz), updated_at: formatTimestamp(g.updated_at, tz) };
}

export const GroupPageSchema = pagedSchema(GroupSchema, 'GroupPage');

type TreeNode = { id: number; name: string; description: string; device_count: number; children: TreeNode[] };

export const GroupTreeNodeSchema: z.ZodType<TreeNode> = z
  .object({
    id: z.number().int().openapi({ example: 2 }),
    name: z.string().openapi({ example: 'Berlin' }),
    description: z.string(),
    device_count: z
      .number()
      .int()
      .openapi({ description: 'Devices in this group and all its subgroups that are inside the caller’s device-group scope', example: 40 }),
    get children() {
      return z.array(GroupTreeNodeSchema).openapi({ description: 'Subgroups, ordered by name' });
    },
  })
  .openapi('GroupTreeNode');

export const GroupTreeSchema = z.array(GroupTreeNodeSchema).openapi('GroupTree', { description: 'Top-level groups, ordered by name' });

const ParentIdSchema = RefIdSchema.nullable().openapi({ description: 'Parent group id (must exist); null for a top-level group', example: 2 });
const GroupScheduleSchema = ScheduleSchema.nullable().openapi({
  description: 'Cron override for the devices of this group and its subgroups; null: inherit from the parent group or the appliance',
  example: '0 3 * * *',
});

export const GroupCreateSchema = z
  .object({
    name: NameSchema.openapi({ description: `Unique among its siblings, 1-128 characters. ${NAME_RULES}`, example: 'Core' }),
    parent_id: ParentIdSchema.default(null),
    description: DescriptionSchema.default(''),
    schedule: GroupScheduleSchema.default(null),
    zone: RecordZoneSchema.default(null),
  })
  .strict()
  .openapi('GroupCreate');

export const GroupUpdateSchema = z
  .object({
    name: NameSchema.optional().openapi({ description: `Unique among its siblings, 1-128 characters. ${NAME_RULES}`, example: 'Core' }),
    parent_id: ParentIdSchema.optional(),
    description: DescriptionSchema.optional(),
    schedule: GroupScheduleSchema.optional(),
    zone: RecordZoneSchema.optional(),
  })
  .strict()
  .openapi('GroupUpdate', { description: 'Partial update: only the fields present change; `null` clears a nullable field.' });

export const GroupListQuerySchema = z.object({
  ...paginationQuery(),
  q: SearchQuery.openapi({ description: 'Case-insensitive substring of the group name', example: 'core' }),
  parent_id: z
    .string()
    .regex(/^([1-9]\d{0,14}|null)$/, 'parent_id must be a positive integer or "null"')
    .transform((v) => (v === 'null' ? null : Number(v)))
    .optional()
    .openapi({ description: 'Only the direct children of this group; `null` for top-level groups', example: '2' }),
});
