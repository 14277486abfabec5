// What event backups (src/events) read of the inventory: the enabled devices to match messages against, whether one
// still is enabled, and when to read them again.
import { databaseGeneration } from '../../db/generation';
import type { DB } from '../../db/open';
import { eventDeviceEnabledRow, eventDeviceRows, eventInventoryVersionRow, type EventDeviceRow } from './event-devices.store';

export type { EventDeviceRow } from './event-devices.store';

/** Every enabled device with its address and template (devices that are disabled get no event backups). */
export function listEventDevices(db: DB): EventDeviceRow[] {
  return eventDeviceRows(db);
}

/** Whether the device still exists and is enabled (a queued event backup of a deleted device is dropped). */
export function eventDeviceEnabled(db: DB, id: number): boolean {
  return eventDeviceEnabledRow(db, id);
}

/** A value that changes whenever a device or template is added, edited or deleted (by this process or another). */
export function eventInventoryVersion(db: DB): string {
  return eventInventoryVersionRow(db);
}

/** A number that moves with every write to the database (null when it cannot tell): when to compare the inventory version again. */
export function inventoryGeneration(db: DB): number | null {
  return databaseGeneration(db);
}
