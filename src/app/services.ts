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
  /** The options object of each pending run() (the base pool passes it to dequeued), with how many it took. */
  private readonly takenOf = new WeakMap<RunOptions, number>();

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
    // The base pool hands this same object to dequeued for each device it takes: that is how this run is told apart.
    const own: RunOptions = { ...opts };
    this.takenOf.set(own, 0);
    this.waiting += total;
    try {
      return await super.run(deviceIds, own);
    } finally {
      // An aborted run leaves devices never taken: they leave the queue too.
      this.waiting -= total - (this.takenOf.get(own) ?? 0);
    }
  }

  protected override dequeued(opts: RunOptions): void {
    const taken = this.takenOf.get(opts);
    if (taken === undefined) return;
    this.waiting--;
    this.takenOf.set(opts, taken + 1);
  }

  override async backupDevice(deviceId: number, opts: RunOptions): Promise<DeviceRunResult> {
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
