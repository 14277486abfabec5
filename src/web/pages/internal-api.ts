// The web interface's internal JSON routes under /api/ (not the public /api/v1): backup jobs and diffs, same permissions and scope.
import { BACKUP_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { getDeviceBackupRow } from '../../features/backups/backups.service';
import { getDevice } from '../../features/devices/devices.service';
import { getTemplateSpec } from '../../features/templates/templates.service';
import { deviceJobView, startBackupJob } from '../backup-jobs';
import { diffBackups } from '../../features/configs/diff.service';
import { intParam, need, type WebEnv } from '../web-context';
import { actorOf } from '../../http/context';

function intQueryOrUndefined(v: string | undefined): number | undefined {
  return v !== undefined && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
}

export function registerInternalApi(web: Hono<WebEnv>): void {
  web.post('/api/devices/:id/backups', need(BACKUP_OPS.run), (c) => {
    const id = intParam(c, 'id');
    const job = startBackupJob(c.get('app'), actorOf(c), { deviceIds: [id] });
    return c.json(deviceJobView(c.get('app'), c.get('principal'), job.id, id), 202);
  });

  web.get('/api/backup-jobs/:job', (c) => {
    // One device's part of a job (the device page's "Back up now"); the Jobs page's routes show whole jobs.
    const job = deviceJobView(c.get('app'), c.get('principal'), c.req.param('job'), intQueryOrUndefined(c.req.query('device_id')));
    if (!job) throw ApiError.notFound('backup job');
    c.header('Cache-Control', 'no-store');
    return c.json(job);
  });

  web.get('/api/devices/:id/diff', need(BACKUP_OPS.browse), async (c) => {
    const id = intParam(c, 'id');
    const app = c.get('app');
    const scope = c.get('principal').scope;
    const device = getDevice(app.db, scope, id);
    const a = getDeviceBackupRow(app.db, scope, id, c.req.query('a') ?? '');
    const b = getDeviceBackupRow(app.db, scope, id, c.req.query('b') ?? '');
    const patterns = c.req.query('ignore') === '1' ? (getTemplateSpec(app.db, device.template_id)?.ignore_patterns ?? []) : [];
    const names = { a: a.id, b: b.id };
    // The JSON body {identical, added, removed, unified} is built on the worker (it can be tens of MB).
    const r = await diffBackups(app, a, b, names, patterns, { json: true });
    if (r === null || r.json === null) throw new ApiError('CONFLICT', 'One of the two versions has no stored text');
    c.header('Cache-Control', 'no-store');
    return c.body(r.json, 200, { 'Content-Type': 'application/json' });
  });
}
