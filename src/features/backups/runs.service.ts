// Manual backup runs (web "Back up now", its internal route, `confvault backup run`): policy and the audit row of the request.
import type { DB } from '../../db/open';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { recordAudit } from '../audit/audit.service';
import { getDevice } from '../devices/devices.service';

/**
 * A user asks for a backup of one device now: needs backups.run and the device in scope (403 otherwise, 404 when
 * it does not exist). The audit row is written before the run starts; the run's outcome is the backup record.
 */
export function requestDeviceBackup(db: DB, actor: Actor, deviceId: number, job: string): { id: number; name: string } {
  authorize(actor, 'backups.run');
  return db
    .transaction(() => {
      const d = getDevice(db, actor.principal.scope, deviceId);
      recordAudit(db, actor, { action: 'backup.run', target: `device ${d.id}`, details: { name: d.name, job } });
      return { id: d.id, name: d.name };
    })
    .immediate();
}

/** The selection of a console run: one device, a group and its subgroups, or every enabled device. */
export type RunSelection = { deviceId: number } | { groupId: number } | { all: true };

/** A console run of many devices: one audit row naming the selection and how many devices it held. */
export function recordBackupRun(db: DB, actor: Actor, selection: RunSelection, deviceIds: readonly number[]): void {
  authorize(actor, 'backups.run');
  const target = 'deviceId' in selection ? `device ${selection.deviceId}` : 'groupId' in selection ? `group ${selection.groupId}` : 'all devices';
  db.transaction(() => {
    recordAudit(db, actor, { action: 'backup.run', target, details: { devices: deviceIds.length, device_ids: deviceIds.slice(0, 50) } });
  }).immediate();
}
