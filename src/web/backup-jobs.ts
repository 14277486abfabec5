// "Back up now" from the web: one job per click, run by the process's BackupRunner, polled by the page until it finishes.
import { randomUUID } from 'node:crypto';
import type { AppServices, RunSummary } from '../http/context';
import type { Actor } from '../identity/actor';
import { requestDeviceBackup } from '../features/backups/runs.service';

export interface BackupJob {
  id: string;
  deviceId: number;
  userId: number;
  startedAt: number;
  finishedAt: number | null;
  result: RunSummary | null;
  /** The runner's latest word beyond "running", e.g. "retrying: connection refused"; kept after the end. */
  progress: string | null;
}

// Finished jobs are kept long enough for the page to pick up the result, then dropped.
const KEEP_FINISHED_MS = 15 * 60_000;
/** Jobs kept at most; past it the oldest finished ones go first (a running job is never dropped). */
const MAX_JOBS = 10_000;
const jobs = new Map<string, BackupJob>();

/** Start a manual backup of a device: the service checks permission and scope and audits the request first. */
export function startBackupJob(app: AppServices, actor: Actor, deviceId: number, onDone?: (r: RunSummary) => void): BackupJob {
  const id = randomUUID();
  requestDeviceBackup(app.db, actor, deviceId, id);
  const userId = actor.principal.userId;
  const now = Date.now();
  for (const [id, j] of jobs) if (j.finishedAt !== null && now - j.finishedAt > KEEP_FINISHED_MS) jobs.delete(id);
  for (const [id, j] of jobs) {
    if (jobs.size < MAX_JOBS) break;
    if (j.finishedAt !== null) jobs.delete(id);
  }
  const job: BackupJob = { id, deviceId, userId, startedAt: now, finishedAt: null, result: null, progress: null };
  jobs.set(job.id, job);
  void app.runner.backupDevice(deviceId, { trigger: 'manual', onProgress: (_id, text) => (job.progress = text) }).then((r) => {
    job.result = r;
    job.finishedAt = Date.now();
    onDone?.(r);
  });
  return job;
}

/** A job of this user only: job ids are not capabilities to be shared. */
export function getBackupJob(id: string, userId: number): BackupJob | undefined {
  const j = jobs.get(id);
  return j && j.userId === userId ? j : undefined;
}

export function jobView(j: BackupJob) {
  return {
    id: j.id,
    device_id: j.deviceId,
    state: j.finishedAt === null ? 'running' : j.result?.success ? 'succeeded' : j.result?.failure === 'SKIPPED' ? 'skipped' : 'failed',
    elapsed_ms: (j.finishedAt ?? Date.now()) - j.startedAt,
    backup_id: j.result?.backupId ?? null,
    changed: j.result?.changed ?? false,
    failure: j.result?.failure ?? null,
    message: j.result?.message ?? null,
    progress: j.progress,
    attempts: j.result?.attempts ?? null,
  };
}
