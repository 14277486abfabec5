// The web interface's internal JSON routes under /api/ (not the public /api/v1): backup jobs and diffs, same permissions and scope.
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { getDeviceBackup } from '../../features/backups/backups.service';
import { getDevice } from '../../features/devices/devices.service';
import { getTemplateSpec } from '../../features/templates/templates.service';
import { getBackupJob, jobView, startBackupJob } from '../backup-jobs';
import { compareTexts, unifiedText, withoutIgnored } from '../diff';
import { intParam, need, type WebEnv } from '../web-context';
import { actorOf } from '../../http/context';

export function registerInternalApi(web: Hono<WebEnv>): void {
  web.post('/api/devices/:id/backups', need('devices.view', 'backups.run'), (c) => {
    const id = intParam(c, 'id');
    const job = startBackupJob(c.get('app'), actorOf(c), id);
    return c.json(jobView(job), 202);
  });

  web.get('/api/backup-jobs/:job', (c) => {
    const job = getBackupJob(c.req.param('job'), c.get('principal').userId);
    if (!job) throw ApiError.notFound('backup job');
    c.header('Cache-Control', 'no-store');
    return c.json(jobView(job));
  });

  web.get('/api/devices/:id/diff', need('devices.view', 'backups.view'), (c) => {
    const id = intParam(c, 'id');
    const app = c.get('app');
    const scope = c.get('principal').scope;
    const device = getDevice(app.db, scope, id);
    const a = getDeviceBackup(app.db, app.snapshots, app.log, scope, id, c.req.query('a') ?? '');
    const b = getDeviceBackup(app.db, app.snapshots, app.log, scope, id, c.req.query('b') ?? '');
    if (a.text === null || b.text === null) throw new ApiError('CONFLICT', 'One of the two versions has no stored text');
    const patterns = c.req.query('ignore') === '1' ? getTemplateSpec(app.db, device.template_id)?.ignore_patterns ?? [] : [];
    const names = { a: a.row.id, b: b.row.id };
    const r = compareTexts(withoutIgnored(a.text, patterns), withoutIgnored(b.text, patterns), names);
    c.header('Cache-Control', 'no-store');
    return c.json({ identical: r.identical, added: r.added, removed: r.removed, unified: unifiedText(r, names) });
  });
}
