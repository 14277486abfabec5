// The engine's side of backup jobs (src/engine/jobs.ts JobExecutor): claim queued jobs, mark items as they run, retry and end, heartbeats, cancel requests.
import { withEngineSync, type DB } from '../../db/open';
import {
  OPEN_ITEM_STATES,
  cancelRequestedIds,
  claimJobRow,
  closeOpenItems,
  finishItemRow,
  finishJobRow,
  getItemRow,
  getJobRow,
  jobDeviceIds,
  markItemRetrying,
  markItemRunning,
  queuedJobIds,
  touchJobRows,
  type ItemRow,
} from './jobs.store';

/** How one device's backup in a job ended, as the runner reports it. */
export interface ItemResult {
  success: boolean;
  changed: boolean;
  first: boolean;
  failure: string | null;
  message: string | null;
  backupId: string | null;
  attempts: number;
}

/** The jobs waiting for a server, oldest first. */
export function listQueuedJobs(db: DB): string[] {
  return queuedJobIds(db);
}

/** Take a queued job for this process; false when another one took it. */
export function claimJob(db: DB, jobId: string, owner: string, at = Date.now()): boolean {
  return withEngineSync(db, () => claimJobRow(db, jobId, owner, at));
}

/** The job's devices still to back up, and its trigger for the backup records (by the door it was asked through). */
export function jobWork(db: DB, jobId: string): { deviceIds: number[]; trigger: 'manual' | 'cli' | 'api' } | undefined {
  const job = getJobRow(db, jobId);
  if (!job) return undefined;
  const trigger = job.door === 'cli' ? 'cli' : job.door === 'api' ? 'api' : 'manual';
  return { deviceIds: jobDeviceIds(db, jobId, 'queued'), trigger };
}

/** The device's item starts now; false when it was cancelled meanwhile (it is then left out). */
export function startJobItem(db: DB, jobId: string, deviceId: number, at = Date.now()): boolean {
  return withEngineSync(db, () => markItemRunning(db, jobId, deviceId, at));
}

export function retryJobItem(db: DB, jobId: string, deviceId: number, failedAttempt: number, reason: string): void {
  withEngineSync(db, () => markItemRetrying(db, jobId, deviceId, failedAttempt, reason));
}

/** Record how a device's backup ended: a first version, a change or none; a failure with its backup record; or cancelled. */
export function finishJobItem(db: DB, jobId: string, deviceId: number, r: ItemResult, at = Date.now()): void {
  withEngineSync(db, () => {
    const item = getItemRow(db, jobId, deviceId);
    const cancelled = item?.cancel_requested === 1 && !r.success;
    const state: ItemRow['state'] = r.success
      ? 'succeeded'
      : cancelled
        ? 'cancelled'
        : r.failure === 'SKIPPED'
          ? 'skipped'
          : r.failure === 'INTERRUPTED'
            ? 'interrupted'
            : 'failed';
    finishItemRow(db, jobId, deviceId, {
      state,
      outcome: r.success ? (r.first ? 'first' : r.changed ? 'changed' : 'unchanged') : null,
      message: cancelled ? 'Cancelled while running.' : r.message,
      failure_type: r.failure,
      backup_id: r.backupId,
      attempt: r.attempts,
      at,
    });
  });
}

/**
 * The job's end: items still open (the run was stopped: cancelled, or the process is stopping) are closed,
 * and the job is finished, cancelled (someone cancelled it) or interrupted (the process stopped).
 */
export function endJob(db: DB, jobId: string, how: 'done' | 'stopped', at = Date.now()): void {
  withEngineSync(db, () =>
    db
      .transaction(() => {
        const job = getJobRow(db, jobId);
        if (!job) return;
        const left = closeOpenItems(
          db,
          jobId,
          OPEN_ITEM_STATES,
          how === 'stopped' && !job.cancelled_by ? 'interrupted' : 'cancelled',
          how === 'stopped' && !job.cancelled_by ? 'The appliance stopped before this backup ran.' : `Cancelled by ${job.cancelled_by ?? 'the appliance'}.`,
          at,
        );
        // Items a scoped user's resume left interrupted (outside their groups) keep the job resumable by someone else.
        const interrupted = left > 0 || jobDeviceIds(db, jobId, 'interrupted').length > 0;
        finishJobRow(db, jobId, job.cancelled_by ? 'cancelled' : interrupted ? 'interrupted' : 'finished', at);
      })
      .immediate(),
  );
}

/** Renew the heartbeat of the jobs this process runs, and say which of their running items someone asked to stop. */
export function beatJobs(db: DB, jobIds: readonly string[], at = Date.now()): Map<string, number[]> {
  withEngineSync(db, () => touchJobRows(db, jobIds, at));
  return new Map(jobIds.map((id) => [id, cancelRequestedIds(db, id)]));
}
