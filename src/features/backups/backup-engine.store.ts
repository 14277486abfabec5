// The queries the backup engine's work lists come from: devices selected by a run, schedules of devices and groups, probe targets.
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

/**
 * Every enabled device's id, group and own schedule (null when unset), in id order, as three parallel arrays. Read as
 * three JSON arrays in one row because better-sqlite3 builds a JS object per row (about 1 us each): 100,000 devices
 * cost 90-120 ms as rows and about 30 ms this way (test/bench/scheduler-bench.ts).
 */
export function enabledDeviceSchedules(db: DB): { ids: number[]; groupIds: (number | null)[]; schedules: (string | null)[] } {
  const r = db
    .prepare(
      `SELECT json_group_array(id) AS ids, json_group_array(group_id) AS group_ids, json_group_array(schedule) AS schedules
         FROM (SELECT id, group_id, schedule FROM devices WHERE enabled = 1 ORDER BY id)`,
    )
    .get() as { ids: string; group_ids: string; schedules: string };
  return {
    ids: JSON.parse(r.ids) as number[],
    groupIds: JSON.parse(r.group_ids) as (number | null)[],
    schedules: JSON.parse(r.schedules) as (string | null)[],
  };
}

/** The counter triggers move whenever a device's or group's schedule, group, parent or state changes (schema 0030). */
export function scheduleVersion(db: DB): number {
  return db.prepare('SELECT version FROM schedule_version WHERE id = 1').pluck().get() as number;
}

/** Every group's parent and own schedule (null when unset). */
export function groupScheduleRows(db: DB): { id: number; parent_id: number | null; schedule: string | null }[] {
  return db.prepare('SELECT id, parent_id, schedule FROM device_groups').all() as { id: number; parent_id: number | null; schedule: string | null }[];
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
