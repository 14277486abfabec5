// Backup jobs started by a request (web pages, the API): requested through the jobs service, run at once by this server's runner.
import type { AppServices } from '../../http/context';
import type { Actor } from '../../identity/actor';
import { requestBackupJob, resumeBackupJob, type JobSelection, type RequestedJob } from './jobs.service';

/**
 * Start a job now: the service checks permission and scope, writes the job, its items and the audit row; this
 * process runs it (the Jobs page, the device page and API clients follow it through the database).
 */
export function startBackupJob(app: AppServices, actor: Actor, selection: JobSelection): RequestedJob {
  const job = requestBackupJob(app.db, actor, selection, app.jobs.owner);
  void app.jobs.execute(job.id);
  return job;
}

/** Resume an interrupted job now (the service checks permission and scope, requeues, audits); this process runs it. */
export function resumeBackupJobHere(app: AppServices, actor: Actor, id: string): { resumed: number; label: string } {
  const r = resumeBackupJob(app.db, actor, id, app.jobs.owner);
  void app.jobs.execute(id);
  return r;
}
