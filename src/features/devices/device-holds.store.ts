// Queries for device credential holds: a device whose address or credential a user not entitled to it chose, waiting for approval.
import type { DB } from '../../db/open';
import { prepareCached } from './sql';

/** The fields a hold can name as changed since the last approved address. */
export type HeldField = 'created' | 'hostname' | 'port' | 'protocol' | 'credential_id' | 'host_key' | 'template_id';

export interface HeldAddress {
  credential_id: number;
  hostname: string;
  port: number;
  protocol: string;
}

export interface DeviceHold extends HeldAddress {
  device_id: number;
  /** The address last approved; null when the device was created held. */
  prior: HeldAddress | null;
  changed: HeldField[];
  reason: string;
  held_by: string;
  held_at: number;
  /** Name of the device's current credential (null if it is gone). */
  credential_name: string | null;
}

interface DeviceHoldRow extends HeldAddress {
  device_id: number;
  prior_credential_id: number | null;
  prior_hostname: string | null;
  prior_port: number | null;
  prior_protocol: string | null;
  changed: string;
  reason: string;
  held_by: string;
  held_at: number;
  credential_name: string | null;
}

function toDeviceHold(r: DeviceHoldRow): DeviceHold {
  const prior =
    r.prior_credential_id !== null && r.prior_hostname !== null && r.prior_port !== null && r.prior_protocol !== null
      ? { credential_id: r.prior_credential_id, hostname: r.prior_hostname, port: r.prior_port, protocol: r.prior_protocol }
      : null;
  return {
    device_id: r.device_id,
    credential_id: r.credential_id,
    hostname: r.hostname,
    port: r.port,
    protocol: r.protocol,
    prior,
    changed: JSON.parse(r.changed) as HeldField[],
    reason: r.reason,
    held_by: r.held_by,
    held_at: r.held_at,
    credential_name: r.credential_name,
  };
}

export function getDeviceHold(db: DB, deviceId: number): DeviceHold | undefined {
  const row = prepareCached(
    db,
    `SELECT h.*, c.name AS credential_name FROM device_credential_holds h
       JOIN devices d ON d.id = h.device_id LEFT JOIN credentials c ON c.id = d.credential_id
      WHERE h.device_id = ?`,
  ).get(deviceId) as DeviceHoldRow | undefined;
  return row ? toDeviceHold(row) : undefined;
}

/** Which of the given devices are held (for a list page). */
export function heldDeviceIds(db: DB, deviceIds: readonly number[]): Set<number> {
  if (deviceIds.length === 0) return new Set();
  const rows = prepareCached(db, 'SELECT device_id FROM device_credential_holds WHERE device_id IN (SELECT value FROM json_each(?))').all(
    JSON.stringify(deviceIds),
  ) as { device_id: number }[];
  return new Set(rows.map((r) => r.device_id));
}

/** Place a hold, or move an existing one to the new held address (its prior address stays, the changed fields add up). */
export function putDeviceHold(
  db: DB,
  hold: HeldAddress & { device_id: number; prior: HeldAddress | null; changed: HeldField[]; reason: string; held_by: string; held_at: number },
): void {
  const existing = getDeviceHold(db, hold.device_id);
  const changed = [...new Set([...(existing?.changed ?? []), ...hold.changed])];
  const prior = existing ? existing.prior : hold.prior;
  prepareCached(
    db,
    `INSERT OR REPLACE INTO device_credential_holds
       (device_id, credential_id, hostname, port, protocol, prior_credential_id, prior_hostname, prior_port, prior_protocol, changed, reason, held_by, held_at)
     VALUES (@device_id, @credential_id, @hostname, @port, @protocol, @pc, @ph, @pp, @pr, @changed, @reason, @held_by, @held_at)`,
  ).run({
    device_id: hold.device_id,
    credential_id: hold.credential_id,
    hostname: hold.hostname,
    port: hold.port,
    protocol: hold.protocol,
    pc: prior?.credential_id ?? null,
    ph: prior?.hostname ?? null,
    pp: prior?.port ?? null,
    pr: prior?.protocol ?? null,
    changed: JSON.stringify(changed),
    reason: hold.reason,
    held_by: hold.held_by,
    held_at: hold.held_at,
  });
}

/** Returns whether there was a hold to remove. */
export function deleteDeviceHold(db: DB, deviceId: number): boolean {
  return prepareCached(db, 'DELETE FROM device_credential_holds WHERE device_id = ?').run(deviceId).changes > 0;
}
