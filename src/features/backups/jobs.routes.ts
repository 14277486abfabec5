// Public API routes for backup jobs: start a backup (one device, a selection, a group), list and read jobs, cancel one.
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { BACKUP_OPS } from './backups.policy';
import { startBackupJob } from './jobs-here.service';
import { cancelBackupJob, getBackupJob, pageBackupJobs } from './jobs.service';
import {
  CancelJobBodySchema,
  JobItemsQuery,
  JobListQuery,
  JobPageSchema,
  JobParams,
  JobSchema,
  JobWithItemsSchema,
  StartJobBodySchema,
  selectionOf,
  toJobDto,
  toJobItemDto,
} from './jobs.schemas';

const tags = ['Backup jobs'];
const security = [{ ApiKeyAuth: [] }];

const startRoute = createRoute({
  method: 'post',
  path: '/jobs',
  operationId: 'startBackupJob',
  tags,
  summary: 'Start a backup',
  description:
    'Backs up one device (`device_id`), a selection (`device_ids`) or a group with its subgroups (`group_id`, its enabled devices) now. ' +
    'Answers 202 with the job at once; follow it with `GET /jobs/{job_id}` until `status` is no longer `queued` or `running`. ' +
    'Every named device and the group must exist (404) and be inside the key’s device-group scope (403); a retired device named by `device_id` or `device_ids` answers 409 `CONFLICT` ' +
    '(reactivate it first; a group’s retired devices are skipped). One audit entry. Permission: `backups.run` and `devices.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.run)] as const,
  request: { body: jsonBody(StartJobBodySchema) },
  responses: {
    202: {
      ...jsonResponse(JobSchema, 'The job, started'),
      headers: { Location: { description: 'The job’s address', schema: { type: 'string' as const } } },
    },
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/jobs',
  operationId: 'listBackupJobs',
  tags,
  summary: 'List backup jobs',
  description:
    'Backup jobs of the last 30 days, newest first, started from the web, the CLI or the API. A key scoped to groups sees only jobs ' +
    'holding a device of its groups, counted over those devices. Permission: `backups.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.jobs)] as const,
  request: { query: JobListQuery },
  responses: { 200: jsonResponse(JobPageSchema, 'One page of jobs'), ...errorResponses('PERMISSION_DENIED') },
});

const getRoute = createRoute({
  method: 'get',
  path: '/jobs/{job_id}',
  operationId: 'getBackupJob',
  tags,
  summary: 'Read a backup job with its items',
  description:
    'The job and one page of its items (one per device, by device name; `page`/`limit` page the items). Each succeeded item names the ' +
    '`backup_id` it wrote. A job holding no device of the key’s scope: 403. Permission: `backups.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.jobs)] as const,
  request: { params: JobParams, query: JobItemsQuery },
  responses: { 200: jsonResponse(JobWithItemsSchema, 'The job and a page of its items'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const cancelRoute = createRoute({
  method: 'post',
  path: '/jobs/{job_id}/cancel',
  operationId: 'cancelBackupJob',
  tags,
  summary: 'Cancel a backup job',
  description:
    'Cancels what is left of an open job: queued items at once, running ones within a second or two. Idempotent while the job is open ' +
    '(cancelling again changes nothing and answers 200 with the job). The body is `{}` (request bodies are JSON); a job that already ended answers 409 `CONFLICT`. A scoped key cancels ' +
    'only the devices of its groups; another user’s job also needs `users.update`. Permission: `backups.run`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.cancelJob)] as const,
  request: { params: JobParams, body: jsonBody(CancelJobBodySchema) },
  responses: {
    200: jsonResponse(JobSchema, 'The job after the request'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, startRoute, (c) => {
    const app = c.get('app');
    const job = startBackupJob(app, actorOf(c), selectionOf(c.req.valid('json')));
    const view = getBackupJob(app.db, c.get('principal'), job.id);
    c.header('Location', `/api/v1/jobs/${job.id}`);
    return c.json(toJobDto(view, c.get('timezone')), 202);
  });

  registerRoute(api, listRoute, (c) => {
    const { page, limit, open, mine } = c.req.valid('query');
    const tz = c.get('timezone');
    const r = pageBackupJobs(c.get('app').db, c.get('principal'), { openOnly: open, mine, limit, offset: (page - 1) * limit });
    return c.json({ items: r.items.map((j) => toJobDto(j, tz)), pagination: pagination(page, limit, r.total) }, 200);
  });

  registerRoute(api, getRoute, (c) => {
    const { job_id } = c.req.valid('param');
    const { page, limit } = c.req.valid('query');
    const tz = c.get('timezone');
    const { items, ...job } = getBackupJob(c.get('app').db, c.get('principal'), job_id);
    const shown = items.slice((page - 1) * limit, page * limit);
    return c.json({ job: toJobDto(job, tz), items: shown.map((i) => toJobItemDto(i, tz)), pagination: pagination(page, limit, items.length) }, 200);
  });

  registerRoute(api, cancelRoute, (c) => {
    const { job_id } = c.req.valid('param');
    const app = c.get('app');
    const before = getBackupJob(app.db, c.get('principal'), job_id);
    // A second cancel of a job still stopping is not an error: nothing is left to cancel, and the answer says what the job is.
    if (before.cancelled_by === null || (before.state !== 'queued' && before.state !== 'running')) cancelBackupJob(app.db, actorOf(c), job_id);
    return c.json(toJobDto(getBackupJob(app.db, c.get('principal'), job_id), c.get('timezone')), 200);
  });
}
