// The queries the backup engine's work lists come from: devices selected by a run, effective schedules, probe targets.
import type { DB } from '../../db/open';

/** The device ids of one device (enabled or not), of a group with its subgroups (enabled only), or of every enabled device. */
export function selectDeviceIdRows(db: DB, sel: { deviceId?: number; groupId?: number }): number[] {
  if (sel.deviceId !== undefined) return db.prepare('SELECT id FROM devices WHERE id = ?').pluck().all(sel.deviceId) as number[];
  if (sel.groupId !== undefined) {
    return db
      .prepare(
        `WITH RECURSIVE g(id) AS (SELECT ? UNION SELECT dg.id FROM device_groups dg JOIN g ON dg.parent_id = g.id)
         SELECT d.id FROM devices d WHERE d.group_id IN (SELECT id FROM g) AND d.enabled = 1 ORDER BY d.id`,
      )
      .pluck()
      .all(sel.groupId) as number[];
  }
  return db.prepare('SELECT id FROM devices WHERE enabled = 1 ORDER BY id').pluck().all() as number[];
}

/** Each enabled device with its own schedule, else the nearest group's up the tree; null when none is set. */
export function deviceScheduleRows(db: DB): { device_id: number; schedule: string | null }[] {
  return db
    .prepare(
      `WITH RECURSIVE chain(device_id, group_id, depth, schedule) AS (
         SELECT d.id, d.group_id, 0, d.schedule FROM devices d WHERE d.enabled = 1
         UNION ALL
         SELECT c.device_id, g.parent_id, c.depth + 1, g.schedule
           FROM chain c JOIN device_groups g ON g.id = c.group_id
          WHERE c.schedule IS NULL)
       SELECT device_id, schedule FROM chain WHERE schedule IS NOT NULL
       UNION ALL
       SELECT device_id, NULL FROM chain GROUP BY device_id HAVING count(schedule) = 0`,
    )
    .all() as { device_id: number; schedule: string | null }[];
}

export interface ProbeTargetRow {
  id: number;
  hostname: string;
  port: number;
  protocol: string;
}

/** Every enabled device's management address, for the reachability probe. */
export function probeTargetRows(db: DB): ProbeTargetRow[] {
  return db.prepare('SELECT id, hostname, port, protocol FROM devices WHERE enabled = 1').all() as ProbeTargetRow[];
}
