// The device inventory with names instead of ids: CSV export of a filtered list, and the device CLI's list and detail views.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Scope } from '../../identity/principal';
import { effectiveSchedules } from '../backups/backup-engine.service';
import { devicesToCsv, type RawDevice } from './devices-csv';
import { loadInventoryRefs, type InventoryRefs } from './devices-import-refs';
import { getDeviceIdByName } from './devices-import.store';
import { getDevice, listDevices, type Device, type DeviceFilter } from './devices.service';

const PAGE = 500;

export interface InventoryDevice extends Device {
  group: string | null;
  credential: string;
  template: string;
}

/** Every device in the scope matching the filter (as the device list filters), ordered by name, read in one snapshot. */
export function listInventory(db: DB, scope: Scope, filter: DeviceFilter): InventoryDevice[] {
  return db.transaction(() => {
    const refs = loadInventoryRefs(db);
    const out: InventoryDevice[] = [];
    for (let page = 1; ; page++) {
      const { items, total } = listDevices(db, scope, filter, page, PAGE);
      out.push(...items.map((d) => named(refs, d)));
      if (items.length === 0 || page * PAGE >= total) return out;
    }
  })();
}

/** The CSV of the devices in the scope matching the filter: the import's columns, names not ids, readable back by import. */
export function exportDevicesCsv(db: DB, scope: Scope, filter: DeviceFilter): { csv: string; devices: number } {
  const devices = listInventory(db, scope, filter);
  return { csv: devicesToCsv(devices.map(toRaw)), devices: devices.length };
}

function named(refs: InventoryRefs, d: Device): InventoryDevice {
  return {
    ...d,
    group: d.group_id === null ? null : refs.groupLabel(d.group_id),
    credential: refs.credentialName(d.credential_id),
    template: refs.templateName(d.template_id),
  };
}

function toRaw(d: InventoryDevice): RawDevice {
  return {
    name: d.name,
    hostname: d.hostname,
    port: String(d.port),
    protocol: d.protocol,
    group: d.group ?? '',
    credential: d.credential,
    template: d.template,
    enabled: d.enabled ? 'true' : 'false',
    description: d.description,
    schedule: d.schedule ?? '',
  };
}

/** A device by id (all digits) or by name (names first when a device is named like a number), scope-checked. */
export function getInventoryDevice(db: DB, scope: Scope, ref: string): InventoryDevice {
  const byName = getDeviceIdByName(db, ref);
  const id = byName ?? (/^\d{1,15}$/.test(ref) ? Number(ref) : undefined);
  if (id === undefined) throw ApiError.notFound(`device "${ref}"`);
  return named(loadInventoryRefs(db), getDevice(db, scope, id));
}

/** The schedule the device is backed up on: its own, or inherited (nearest group's, else the appliance's); null when disabled. */
export function deviceSchedule(db: DB, device: Device, applianceSchedule: string): { expr: string; source: 'device' | 'inherited' } | null {
  if (!device.enabled) return null;
  if (device.schedule !== null) return { expr: device.schedule, source: 'device' };
  for (const [expr, ids] of effectiveSchedules(db, applianceSchedule)) if (ids.includes(device.id)) return { expr, source: 'inherited' };
  return { expr: applianceSchedule, source: 'inherited' };
}
