// Builds the services every request handler shares, once: the backup runner included, so manual backups and the schedule share one guard.
import { BackupRunner } from '../engine/runner';
import type { AppServices } from '../http/context';

export type AppServicesBase = Omit<AppServices, 'runner'>;

/** The shared services with the process's one backup runner (the scheduler and `serve` use the same one). */
export function buildServices(base: AppServicesBase): AppServices & { runner: BackupRunner } {
  return { ...base, runner: new BackupRunner(base) };
}
