// Backup jobs from the web (device page, device list, Jobs page): started by jobs-here.service, followed per device here.
import { getBackupJob } from '../features/backups/jobs.service';
import type { AppServices } from '../http/context';
import type { Principal } from '../identity/principal';

export { resumeBackupJobHere, startBackupJob } from '../features/backups/jobs-here.service';

export type DeviceJobState = 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'interrupted';

/** The device page's view of a job's item for one device ("Back up now"), as the internal /api/backup-jobs/:job route returns it. */
export interface DeviceJobView {
  id: string;
  device_id: number;
  state: DeviceJobState;
  elapsed_ms: number;
  backup_id: string | null;
  changed: boolean;
  first: boolean;
  /** "first version stored", "changed" or "no change" once succeeded. */
  result: string | null;
  failure: string | null;
  message: string | null;
  progress: string | null;
  attempts: number | null;
}

/**
 * One device's part of a job the reader may see (404 when missing, 403 out of scope), or undefined when the job
 * holds no item for that device (or for any device when `deviceId` is omitted and it has several).
 */
export function deviceJobView(app: AppServices, reader: Principal, jobId: string, deviceId?: number): DeviceJobView | undefined {
  const job = getBackupJob(app.db, reader, jobId);
  const item = deviceId === undefined ? (job.items.length === 1 ? job.items[0] : undefined) : job.items.find((i) => i.device_id === deviceId);
  if (!item) return undefined;
  const open = item.state === 'queued' || item.state === 'running' || item.state === 'retrying';
  const from = item.started_at ?? job.created_at;
  return {
    id: job.id,
    device_id: item.device_id,
    state: open ? 'running' : item.state === 'succeeded' ? 'succeeded' : (item.state as DeviceJobState),
    elapsed_ms: Math.max(0, (item.finished_at ?? Date.now()) - from),
    backup_id: item.backup_id,
    changed: item.outcome === 'changed',
    first: item.outcome === 'first',
    result: item.result,
    failure: item.failure,
    message: item.message,
    progress: open && item.state === 'queued' ? 'queued' : item.progress,
    attempts: open ? null : item.attempt,
  };
}
