// Lookups of device import, export and the device CLI: the names of groups, credentials and templates; a device by name.
import type { DB } from '../../db/open';
import { prepareCached } from './sql';

export interface RefRow {
  id: number;
  name: string;
}

export interface GroupRefRow extends RefRow {
  parent_id: number | null;
}

export function listGroupRefs(db: DB): GroupRefRow[] {
  return prepareCached(db, 'SELECT id, name, parent_id FROM device_groups ORDER BY id').all() as GroupRefRow[];
}

export function listCredentialRefs(db: DB): RefRow[] {
  return prepareCached(db, 'SELECT id, name FROM credentials ORDER BY id').all() as RefRow[];
}

export function listTemplateRefs(db: DB): RefRow[] {
  return prepareCached(db, 'SELECT id, name FROM templates ORDER BY id').all() as RefRow[];
}

/** The id of the device with this name under the names' uniqueness rule (case folding), regardless of scope. */
export function getDeviceIdByName(db: DB, name: string): number | undefined {
  const row = prepareCached(db, 'SELECT id FROM devices WHERE name_key(name) = name_key(?)').get(name) as { id: number } | undefined;
  return row?.id;
}
