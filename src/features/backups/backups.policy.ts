// Who may do what with backups and backup jobs: each operation's permissions and scope rule, read by every door.
import { operation } from '../../identity/policy';

const groups = { scope: 'groups' } as const;

export const BACKUP_OPS = {
  list: operation('backups.list', ['backups.view'], groups, { api: 'GET /devices/{device_id}/backups' }),
  content: operation('backups.content', ['backups.view'], groups, { api: 'GET /backups/{backup_id}/content', web: ['GET /devices/:id/backups/:bid/download'] }),
  /** Pages that show a device beside its versions: a version, a diff, the comparison of two devices. */
  browse: operation('backups.browse', ['devices.view', 'backups.view'], groups, {
    api: 'GET /diff',
    web: ['GET /devices/:id/backups/:bid', 'GET /devices/:id/diff', 'GET /api/devices/:id/diff', 'GET /compare'],
  }),
  search: operation('backups.search', ['devices.view', 'backups.view'], groups, { api: 'GET /search', web: ['GET /search', 'GET /search/export'] }),
  /** Starting a backup names devices, so it needs devices.view beside backups.run. */
  run: operation('backups.run', ['devices.view', 'backups.run'], groups, {
    api: 'POST /jobs',
    web: ['POST /devices/:id/backup', 'POST /api/devices/:id/backups', 'POST /jobs', 'POST /api/jobs'],
    cli: 'backup run',
  }),
  import: operation('backups.import', ['backups.run'], groups, { cli: 'backup import' }),
  jobs: operation('backups.jobs', ['backups.view'], groups, {
    api: ['GET /jobs', 'GET /jobs/{job_id}'],
    web: ['GET /jobs', 'GET /jobs/:id', 'GET /api/jobs', 'GET /api/jobs/:id'],
    cli: 'backup jobs',
  }),
  cancelJob: operation('backups.cancel_job', ['backups.run'], groups, {
    api: 'POST /jobs/{job_id}/cancel',
    web: ['POST /jobs/:id/cancel', 'POST /api/jobs/:id/cancel'],
    cli: 'backup jobs cancel',
  }),
  resumeJob: operation('backups.resume_job', ['backups.run'], groups, {
    web: ['POST /jobs/:id/resume', 'POST /api/jobs/:id/resume'],
    cli: 'backup jobs resume',
  }),
} as const;
