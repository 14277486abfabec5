// Builds the services every request handler shares, once: the backup runner included, so manual backups and the schedule share one guard.
import path from 'node:path';
import { BackupRunner, type DeviceRunResult, type RunOptions, type RunnerDeps } from '../engine/runner';
import { attachMetrics, type ApplianceMetrics } from '../features/metrics/metrics.service';
import type { AppServices } from '../http/context';
import { DB_FILE_NAME } from './bootstrap';

export type AppServicesBase = Omit<AppServices, 'runner'>;

/**
 * The runner with its results counted in the appliance's metrics, and the backups waiting in its pool for a worker
 * (the queue depth of /metrics). Every backup of `serve` goes through it: schedule, Back up now, events.
 */
export class MeteredBackupRunner extends BackupRunner {
  private waiting = 0;
  /** The options object of each pending run() (the base pool passes it on to backupDevice), with how many it started. */
  private readonly startedOf = new WeakMap<RunOptions, number>();

  constructor(
    deps: RunnerDeps,
    private readonly metrics: ApplianceMetrics,
  ) {
    super(deps);
  }

  queued(): number {
    return this.waiting;
  }

  override async run(deviceIds: readonly number[], opts: RunOptions): Promise<DeviceRunResult[]> {
    const total = new Set(deviceIds).size;
    // The base pool hands this same object to backupDevice for each device it starts: that is how a start is told apart.
    const own: RunOptions = { ...opts };
    this.startedOf.set(own, 0);
    this.waiting += total;
    try {
      return await super.run(deviceIds, own);
    } finally {
      // An aborted run leaves devices never started: they leave the queue too.
      this.waiting -= total - (this.startedOf.get(own) ?? 0);
    }
  }

  override async backupDevice(deviceId: number, opts: RunOptions): Promise<DeviceRunResult> {
    const started = this.startedOf.get(opts);
    if (started !== undefined) {
      this.waiting--;
      this.startedOf.set(opts, started + 1);
    }
    const r = await super.backupDevice(deviceId, opts);
    this.metrics.observeBackup({ trigger: opts.trigger, success: r.success, changed: r.changed, failure: r.failure, durationMs: r.durationMs });
    return r;
  }
}

/** The shared services with the process's one backup runner (the scheduler and `serve` use the same one). */
export function buildServices(base: AppServicesBase): AppServices & { runner: MeteredBackupRunner } {
  let runner: MeteredBackupRunner | null = null;
  const metrics = attachMetrics({
    db: base.db,
    dbFile: path.join(base.dataDir, DB_FILE_NAME),
    staleAfterHours: base.config.backup.stale_after_hours,
    queued: () => runner?.queued() ?? 0,
  });
  runner = new MeteredBackupRunner(base, metrics);
  return { ...base, runner };
}
