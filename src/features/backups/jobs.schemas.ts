// Schemas of the backup-job API (start, list, read, cancel; they generate the OpenAPI components) and the DTO mapping.
import { z } from '@hono/zod-openapi';
import { MAX_ID, pagedSchema, PaginationSchema, paginationQuery, queryBoolean, UuidParam } from '../../http/openapi';
import { formatNullable, formatTimestamp } from '../../lib/time';
import type { JobItemView, JobSelection, JobView } from './jobs.service';

const TIME = 'Time as `YYYY-MM-DD HH:MM:SS` in the request time zone';
const id = z.number().int().min(1).max(MAX_ID);

export const StartJobBodySchema = z
  .object({
    device_id: id.optional().openapi({ description: 'One device', example: 12 }),
    device_ids: z
      .array(id)
      .min(1)
      .max(10_000)
      .optional()
      .openapi({ description: 'A selection of devices', example: [12, 13] }),
    group_id: id.optional().openapi({ description: 'A group: its enabled devices and those of its subgroups (within the key’s scope)' }),
  })
  .strict()
  .refine((b) => [b.device_id, b.device_ids, b.group_id].filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of device_id, device_ids, group_id',
    path: ['device_id'],
  })
  .openapi('StartBackupJob', { description: 'What to back up: exactly one of `device_id`, `device_ids`, `group_id`', example: { device_id: 12 } });

/** Cancelling takes no options: the body is `{}` (every request body of the API is JSON). */
export const CancelJobBodySchema = z.object({}).strict().openapi('CancelBackupJob', { example: {} });

export function selectionOf(b: z.infer<typeof StartJobBodySchema>): JobSelection {
  if (b.group_id !== undefined) return { groupId: b.group_id };
  return { deviceIds: b.device_ids ?? [b.device_id!] };
}

export const JobStatusSchema = z.enum(['queued', 'running', 'finished', 'cancelled', 'interrupted']).openapi({
  description:
    '`queued`/`running` while open; then `finished` (every item ended: see the counts), `cancelled`, or `interrupted` (the process running it stopped)',
});

const CountsSchema = z
  .object({
    total: z.number().int(),
    done: z.number().int().openapi({ description: 'Items that ended, whatever the outcome' }),
    queued: z.number().int(),
    running: z.number().int(),
    retrying: z.number().int(),
    succeeded: z.number().int(),
    first: z.number().int().openapi({ description: 'Succeeded, first version of the device' }),
    changed: z.number().int().openapi({ description: 'Succeeded, a new version stored' }),
    unchanged: z.number().int().openapi({ description: 'Succeeded, nothing changed' }),
    failed: z.number().int(),
    skipped: z.number().int(),
    cancelled: z.number().int(),
    interrupted: z.number().int(),
  })
  .openapi('BackupJobCounts', { description: 'Item counts (of the devices in the key’s scope)' });

export const JobSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid', example: '5d0c3b8e-1f2a-4c3d-9e8f-7a6b5c4d3e2f' }),
    status: JobStatusSchema,
    label: z.string().openapi({ example: 'device core-sw-1' }),
    selection: z.enum(['devices', 'group', 'all']),
    requested_by: z.string().openapi({ example: 'automation' }),
    door: z.enum(['api', 'web', 'cli', 'system']).openapi({ description: 'Where the job was started' }),
    created_at: z.string().openapi({ description: TIME, example: '2025-03-01 02:00:00' }),
    started_at: z.string().nullable().openapi({ description: TIME }),
    finished_at: z
      .string()
      .nullable()
      .openapi({ description: `${TIME}; null while open` }),
    cancelled_by: z.string().nullable(),
    counts: CountsSchema,
    links: z
      .object({ self: z.string(), cancel: z.string() })
      .openapi({ example: { self: '/api/v1/jobs/5d0c3b8e-1f2a-4c3d-9e8f-7a6b5c4d3e2f', cancel: '/api/v1/jobs/5d0c3b8e-1f2a-4c3d-9e8f-7a6b5c4d3e2f/cancel' } }),
  })
  .openapi('BackupJob', { description: 'A backup job: one or more devices backed up now' });

export const JobItemSchema = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    status: z.enum(['queued', 'running', 'retrying', 'succeeded', 'failed', 'skipped', 'cancelled', 'interrupted']),
    outcome: z.enum(['first', 'changed', 'unchanged']).nullable().openapi({ description: 'For a succeeded item' }),
    attempt: z.number().int(),
    failure_type: z.string().nullable().openapi({ description: 'For a failed item: the failure type (e.g. `auth_failed`, `timeout`)' }),
    message: z.string().nullable(),
    backup_id: z.string().nullable().openapi({ description: 'The backup record written (GET /backups/{backup_id}/content)' }),
    started_at: z.string().nullable().openapi({ description: TIME }),
    finished_at: z.string().nullable().openapi({ description: TIME }),
  })
  .openapi('BackupJobItem', { description: 'One device of a job' });

export const JobWithItemsSchema = z
  .object({ job: JobSchema, items: z.array(JobItemSchema), pagination: PaginationSchema })
  .openapi('BackupJobWithItems', { description: 'A job and one page of its items (ordered by device name)' });

export const JobPageSchema = pagedSchema(JobSchema, 'BackupJobPage');

export const JobParams = z.object({ job_id: UuidParam('job_id').openapi({ example: '5d0c3b8e-1f2a-4c3d-9e8f-7a6b5c4d3e2f' }) });

export const JobListQuery = z.object({
  ...paginationQuery(),
  open: queryBoolean().openapi({ description: 'Only queued or running jobs' }),
  mine: queryBoolean().openapi({ description: 'Only jobs started by the key’s user' }),
});
export const JobItemsQuery = z.object(paginationQuery(50, 100));

export function toJobDto(j: JobView, tz: string): z.infer<typeof JobSchema> {
  const self = `/api/v1/jobs/${j.id}`;
  const { progress } = j;
  return {
    id: j.id,
    status: j.state,
    label: j.label,
    selection: j.selection,
    requested_by: j.requested_by,
    door: j.door,
    created_at: formatTimestamp(j.created_at, tz),
    started_at: formatNullable(j.started_at, tz),
    finished_at: formatNullable(j.finished_at, tz),
    cancelled_by: j.cancelled_by,
    counts: { ...progress },
    links: { self, cancel: `${self}/cancel` },
  };
}

export function toJobItemDto(i: JobItemView, tz: string): z.infer<typeof JobItemSchema> {
  return {
    device_id: i.device_id,
    device_name: i.device_name,
    status: i.state,
    outcome: i.state === 'succeeded' ? i.outcome : null,
    attempt: i.attempt,
    failure_type: i.failure,
    message: i.message,
    backup_id: i.backup_id,
    started_at: formatNullable(i.started_at, tz),
    finished_at: formatNullable(i.finished_at, tz),
  };
}
