// Builds the services every request handler shares, once: the backup runner and its job executor included, so manual backups and the schedule share one guard.
import path from 'node:path';
import { detectAt } from '../engine/device-detect';
import { JobExecutor } from '../engine/jobs';
import { BackupRunner } from '../engine/runner';
import { attachMetrics } from '../features/metrics/metrics.service';
import type { AppServices } from '../http/context';
import type { Actor } from '../identity/actor';
import type { DetectAddress } from '../features/devices/detect.service';
import { DB_FILE_NAME } from './bootstrap';

export type AppServicesBase = Omit<AppServices, 'jobs' | 'detector'>;

/** The shared services, the process's one backup runner and the executor of its jobs (the scheduler and `serve` use the same ones). */
export function buildServices(base: AppServicesBase): AppServices & { runner: BackupRunner; jobs: JobExecutor } {
  let runner: BackupRunner | null = null;
  const metrics = attachMetrics({
    db: base.db,
    dbFile: path.join(base.dataDir, DB_FILE_NAME),
    staleAfterHours: base.config.backup.stale_after_hours,
    queued: () => runner?.queued() ?? 0,
    replication: base.config.replication.enabled,
  });
  // Every backup of `serve` goes through this runner (schedule, Back up now, jobs, events): the metrics count them all.
  runner = new BackupRunner(base, {
    backupFinished: (r, trigger) => metrics.observeBackup({ trigger, success: r.success, changed: r.changed, failure: r.failure, durationMs: r.durationMs }),
  });
  const detector = { detectAt: (actor: Actor, at: DetectAddress, first: number | null) => detectAt(base, actor, at, first) };
  return { ...base, runner, jobs: new JobExecutor(base.db, runner, base.log), detector };
}
