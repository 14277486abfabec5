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
