// Queries of the syslog event receiver: the enabled devices it matches messages against.
import type { DB } from '../db/open';

export interface EventDeviceRow {
  id: number;
  name: string;
  hostname: string;
  template_id: number;
}

/** Every enabled device with its address and template (devices that are disabled get no event backups). */
export function listEventDevices(db: DB): EventDeviceRow[] {
  return db.prepare('SELECT id, name, hostname, template_id FROM devices WHERE enabled = 1 ORDER BY id').all() as EventDeviceRow[];
}

/** Whether the device still exists and is enabled (a queued event backup of a deleted device is dropped). */
export function eventDeviceEnabled(db: DB, id: number): boolean {
  return db.prepare('SELECT 1 FROM devices WHERE id = ? AND enabled = 1').get(id) !== undefined;
}
