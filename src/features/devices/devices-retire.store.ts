// Queries of retiring and reactivating a device: a retired device is disabled (schema 0023 checks it) and its reachability unknown.
import type { DB } from '../../db/open';
import { prepareCached } from './sql';

/**
 * Retire: off every schedule (enabled 0, which the backup, probe and event queries read), reachability unknown (no
 * probe will look again, so the problem lists drop it). Its backup records stay. false when it was retired already.
 */
export function setDeviceRetired(db: DB, id: number, by: string, now = Date.now()): boolean {
  return (
    prepareCached(
      db,
      `UPDATE devices SET enabled = 0, retired_at = @now, retired_by = @by, updated_at = @now,
              reachability = 'unknown', reachability_checked_at = NULL, reachability_error = NULL
        WHERE id = @id AND retired_at IS NULL`,
    ).run({ id, by, now }).changes > 0
  );
}

/** Reactivate: back in service and enabled. false when it was not retired. */
export function clearDeviceRetired(db: DB, id: number, now = Date.now()): boolean {
  return (
    prepareCached(db, 'UPDATE devices SET retired_at = NULL, retired_by = NULL, enabled = 1, updated_at = @now WHERE id = @id AND retired_at IS NOT NULL').run({
      id,
      now,
    }).changes > 0
  );
}

/** How many backup records the device has (what deleting it removes). */
export function countDeviceBackups(db: DB, id: number): number {
  return prepareCached(db, 'SELECT count(*) FROM backups WHERE device_id = ?').pluck().get(id) as number;
}
