// Public API routes for backup records: a device's backup history and one backup's configuration text (spec 4.3, 4.4).
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { BACKUP_OPS } from './backups.policy';
import { errorResponses, jsonResponse, jsonTextResponse } from '../../http/openapi';
import { BackupContentParams, BackupContentSchema, BackupHistoryPageSchema, BackupHistoryParams, BackupHistoryQuery } from './backups.schemas';
import { getBackupContent } from './backups.service';
import { renderHistoryPage } from './history-pages';
import { registerRoute } from '../../http/route';

const tags = ['Backups'];
const security = [{ ApiKeyAuth: [] }];

const historyRoute = createRoute({
  method: 'get',
  path: '/devices/{device_id}/backups',
  operationId: 'listDeviceBackups',
  tags,
  summary: 'Device backup history',
  description:
    'Backup records of one device, newest first (by start time, then id). Running backups are included with `finished_at` null. ' +
    '`limit` defaults to 10 and goes up to 200. The device must be inside the device-group scope of the key’s user ' +
    '(devices in no group only for scope "all"). Keep the items with `success` true and read their text with ' +
    '`GET /backups/{backup_id}/content`. Permission: `backups.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.list)] as const,
  request: { params: BackupHistoryParams, query: BackupHistoryQuery },
  responses: {
    200: jsonResponse(BackupHistoryPageSchema, 'One page of backup records'),
    ...errorResponses('PERMISSION_DENIED', 'BACKUP_DEVICE_FORBIDDEN', 'BACKUP_DEVICE_NOT_FOUND'),
  },
});

const contentRoute = createRoute({
  method: 'get',
  path: '/backups/{backup_id}/content',
  operationId: 'getBackupContent',
  tags,
  summary: 'Backup content',
  description:
    'The configuration text of one backup record. Status 200 does not prove that text exists: `config_text` is null for a failed ' +
    'or running backup and for a snapshot that is missing or fails its integrity check (logged on the appliance). The device ' +
    'that owns the backup must be inside the key’s device-group scope. The text can hold sensitive data: the response is ' +
    'sent with `Cache-Control: no-store`; keep it out of logs, monitoring labels and tickets. Permission: `backups.view` ' +
    '(a key whose user holds only this permission is the safe choice for reading backups).',
  security,
  middleware: [requirePermission(BACKUP_OPS.content)] as const,
  request: { params: BackupContentParams },
  responses: {
    200: jsonResponse(BackupContentSchema, 'The configuration text, or null'),
    ...errorResponses('PERMISSION_DENIED', 'BACKUP_DEVICE_FORBIDDEN', 'BACKUP_NOT_FOUND'),
  },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, historyRoute, (c) => {
    const { device_id } = c.req.valid('param');
    const { page, limit } = c.req.valid('query');
    const body = renderHistoryPage(c.get('app').db, c.get('principal'), device_id, page, limit, c.get('timezone'));
    return jsonTextResponse(c, body);
  });

  registerRoute(api, contentRoute, (c) => {
    const { backup_id } = c.req.valid('param');
    const app = c.get('app');
    // Integrity problems are logged with the request id (never the text) so an operator can match a client's report.
    const log = app.log.child({ request_id: c.get('requestId') });
    const config_text = getBackupContent(app.db, app.snapshots, log, c.get('principal'), backup_id);
    c.header('Cache-Control', 'no-store');
    return c.json({ config_text }, 200);
  });
}
