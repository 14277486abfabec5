// Device credential holds: a change by a user not entitled to the device's credential stands but holds its backups until an entitled user approves.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { DEVICE_OPS } from './devices.policy';
import { inScope, type Scope } from '../../identity/principal';
import { recordAudit } from '../audit/audit.service';
import { credentialEntitlementGap, requireCredentialInReach } from '../credentials/credentials.policy';
import { deleteDeviceHold, getDeviceHold, heldDeviceIds, putDeviceHold, type DeviceHold, type HeldAddress, type HeldField } from './device-holds.store';
import { getDeviceRow, type DeviceRow } from './devices.store';

export type { DeviceHold, HeldAddress, HeldField };

/** What a device page shows: the hold, and whether the viewer may approve it. */
export interface DeviceHoldView {
  hold: DeviceHold;
  approvable: boolean;
  /** Why the viewer may not approve (null when it may). */
  notApprovable: string | null;
}

export function addressOf(row: Pick<DeviceRow, 'credential_id' | 'hostname' | 'port' | 'protocol'>): HeldAddress {
  return { credential_id: row.credential_id, hostname: row.hostname, port: row.port, protocol: row.protocol };
}

/**
 * The actor changed where the device's secret goes (the address, the credential, the accepted host key). An
 * entitled actor's change is itself the approval: an existing hold is cleared. Otherwise the device is held at
 * its new address. Returns what the audit row says about the hold, or null when nothing changed about it.
 * Runs inside the caller's transaction.
 */
export function settleHoldAfterChange(db: DB, actor: Actor, deviceId: number, change: { prior: HeldAddress | null; changed: HeldField[] }): HoldOutcome | null {
  const row = getDeviceRow(db, deviceId);
  if (!row) return null;
  const gap = credentialEntitlementGap(db, actor, row.credential_id);
  if (gap === null) {
    // Accepting a host key approves a key, and choosing a template a template, not the address: a hold stays.
    if (change.changed.every((f) => f === 'host_key' || f === 'template_id')) return null;
    if (!deleteDeviceHold(db, deviceId)) return null;
    return {
      note: `cleared: the change by ${actor.principal.username}, entitled to credential ${row.credential_id}, approves the address`,
      held: { before: true, after: false },
    };
  }
  const wasHeld = getDeviceHold(db, deviceId) !== undefined;
  const reason = `${actor.principal.username} ${gap}`;
  putDeviceHold(db, {
    device_id: deviceId,
    ...addressOf(row),
    prior: change.prior,
    changed: change.changed,
    reason,
    held_by: actor.principal.username,
    held_at: Date.now(),
  });
  return {
    note: `placed: backups are held until a user entitled to credential ${row.credential_id} approves (${reason})`,
    held: { before: wasHeld, after: true },
  };
}

/** What a change did to the hold, for its audit row: `details.hold` (the note) and `changes.held` (when it flipped). */
export interface HoldOutcome {
  note: string;
  held: { before: boolean; after: boolean };
}

/** The hold's part of an audit row. */
export function holdAudit(outcome: HoldOutcome | null): { changes: Record<string, { before: unknown; after: unknown }>; details: { hold?: string } } {
  if (!outcome) return { changes: {}, details: {} };
  return { changes: outcome.held.before === outcome.held.after ? {} : { held: outcome.held }, details: { hold: outcome.note } };
}

/** The hold of a device in the viewer's scope, or null; says whether the actor may approve it. */
export function getDeviceHoldView(db: DB, actor: Actor, deviceId: number): DeviceHoldView | null {
  const row = requireInScope(db, actor.principal.scope, deviceId);
  const hold = getDeviceHold(db, deviceId);
  if (!hold) return null;
  const notApprovable = !actor.principal.permissions.has('devices.update')
    ? 'approving needs the permission devices.update'
    : credentialEntitlementGap(db, actor, row.credential_id);
  return { hold, approvable: notApprovable === null, notApprovable };
}

/** Which of the listed devices are held (for the device list's badge). */
export function heldDevices(db: DB, deviceIds: readonly number[]): Set<number> {
  return heldDeviceIds(db, deviceIds);
}

/**
 * A user entitled to the device's credential approves its held address. `shown` is the address the user was
 * shown: when the device changed since (another address or credential), 409 CONFLICT and nothing is approved.
 * The next backup then runs as usual: a device with no recorded host key records the one it meets (trust on
 * first use of the approved address); a recorded key that differs still stops at HOST_KEY_CHANGED.
 */
export function approveDeviceHold(db: DB, actor: Actor, deviceId: number, shown: HeldAddress): void {
  authorize(actor, DEVICE_OPS.approveHold);
  db.transaction(() => {
    const row = requireInScope(db, actor.principal.scope, deviceId);
    const hold = getDeviceHold(db, deviceId);
    if (!hold) throw new ApiError('CONFLICT', `device ${deviceId} is not held; there is nothing to approve`);
    const now = addressOf(row);
    const same = now.credential_id === shown.credential_id && now.hostname === shown.hostname && now.port === shown.port && now.protocol === shown.protocol;
    if (!same) {
      throw new ApiError(
        'CONFLICT',
        `device ${deviceId} changed since it was shown: it is now ${now.protocol}://${now.hostname}:${now.port} with credential ${now.credential_id}; look at it again before approving`,
      );
    }
    requireCredentialInReach(db, actor, row.credential_id, 'Approving the address of a held device');
    deleteDeviceHold(db, deviceId);
    recordAudit(db, actor, {
      action: 'device.hold_approve',
      target: `device ${deviceId}`,
      changes: { held: { before: true, after: false } },
      details: { name: row.name, ...now, changed: hold.changed, held_by: hold.held_by, held_at: hold.held_at, reason: hold.reason },
    });
  }).immediate();
}

function requireInScope(db: DB, scope: Scope, deviceId: number): DeviceRow {
  const row = getDeviceRow(db, deviceId);
  if (!row) throw ApiError.notFound(`device ${deviceId}`);
  if (!inScope(scope, row.group_id)) throw new ApiError('PERMISSION_DENIED', 'The device is outside your device-group scope');
  return row;
}
