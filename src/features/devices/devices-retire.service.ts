// Retire and reactivate a device (it keeps its history, leaves the schedules), and delete one with its history only when its name is typed.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { recordAudit } from '../audit/audit.service';
import { DEVICE_OPS } from './devices.policy';
import { clearDeviceRetired, countDeviceBackups, setDeviceRetired } from './devices-retire.store';
import { deleteDevice, loadDevice, requireDeviceInScope, type Device } from './devices.service';

/**
 * Retire the device: it keeps every backup record (listed, readable, searchable, diffable) but is disabled, leaves the
 * schedules, event backups and probes, and leaves the dashboard's problem lists (its reachability becomes unknown).
 * Retiring a retired device changes nothing and records nothing.
 */
export function retireDevice(db: DB, actor: Actor, id: number): Device {
  authorize(actor, DEVICE_OPS.retire);
  return db
    .transaction(() => {
      const row = requireDeviceInScope(db, actor.principal.scope, id);
      if (setDeviceRetired(db, id, actor.principal.username)) {
        recordAudit(db, actor, {
          action: 'device.retire',
          target: `device ${id}`,
          changes: { enabled: { before: row.enabled === 1, after: false }, retired: { before: false, after: true } },
          details: { name: row.name },
        });
      }
      return loadDevice(db, id);
    })
    .immediate();
}

/** Put a retired device back in service, enabled (its schedule applies again). A device in service is left as it is. */
export function reactivateDevice(db: DB, actor: Actor, id: number): Device {
  authorize(actor, DEVICE_OPS.reactivate);
  return db
    .transaction(() => {
      const row = requireDeviceInScope(db, actor.principal.scope, id);
      if (clearDeviceRetired(db, id)) {
        recordAudit(db, actor, {
          action: 'device.reactivate',
          target: `device ${id}`,
          changes: { enabled: { before: false, after: true }, retired: { before: true, after: false } },
          details: { name: row.name },
        });
      }
      return loadDevice(db, id);
    })
    .immediate();
}

/** What deleting the device removes, for the confirmation page. */
export function deviceDeletionImpact(db: DB, actor: Actor, id: number): { device: Device; backups: number } {
  authorize(actor, DEVICE_OPS.delete);
  requireDeviceInScope(db, actor.principal.scope, id);
  return { device: loadDevice(db, id), backups: countDeviceBackups(db, id) };
}

/**
 * Delete the device and its whole history (the web and CLI door): `typedName` must be the device's name, typed by the
 * user (case as stored), else 422 on `confirm_name` and nothing is deleted. Audited as device.delete.
 */
export function deleteDeviceConfirmed(db: DB, actor: Actor, id: number, typedName: string): void {
  const { device } = deviceDeletionImpact(db, actor, id);
  if (typedName.trim() !== device.name) {
    const message = `type the device's name (${device.name}) to delete it and its history`;
    throw ApiError.validation([{ field: 'confirm_name', message }], message);
  }
  deleteDevice(db, actor, id);
}
