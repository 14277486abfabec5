// Queries for the changed SSH host key a device offered and the one fingerprint a user approved for the next backup.
import type { DB } from '../../db/open';
import { prepareCached } from './sql';

export interface HostKeyOfferRow {
  device_id: number;
  fingerprint: string;
  backup_id: string | null;
  seen_at: number;
  approved_at: number | null;
  approved_by: string | null;
}

export function getHostKeyOffer(db: DB, deviceId: number): HostKeyOfferRow | undefined {
  return prepareCached(db, 'SELECT * FROM device_host_key_offers WHERE device_id = ?').get(deviceId) as HostKeyOfferRow | undefined;
}

/**
 * Record the key a HOST_KEY_CHANGED backup saw. A different fingerprint than the one offered before replaces
 * it and drops its approval (an approval names one key); the same one keeps it. Keeps the device's
 * accept_host_key_change flag equal to "an approval is pending".
 */
export function putHostKeyOffer(db: DB, deviceId: number, fingerprint: string, backupId: string | null, at: number): void {
  prepareCached(
    db,
    `INSERT INTO device_host_key_offers (device_id, fingerprint, backup_id, seen_at) VALUES (@d, @f, @b, @at)
     ON CONFLICT (device_id) DO UPDATE SET
       approved_at = CASE WHEN fingerprint = excluded.fingerprint THEN approved_at END,
       approved_by = CASE WHEN fingerprint = excluded.fingerprint THEN approved_by END,
       fingerprint = excluded.fingerprint, backup_id = excluded.backup_id, seen_at = excluded.seen_at`,
  ).run({ d: deviceId, f: fingerprint, b: backupId, at });
  syncAcceptFlag(db, deviceId);
}

export function setHostKeyApproval(db: DB, deviceId: number, approval: { by: string; at: number } | null): void {
  prepareCached(db, 'UPDATE device_host_key_offers SET approved_at = ?, approved_by = ? WHERE device_id = ?').run(
    approval?.at ?? null,
    approval?.by ?? null,
    deviceId,
  );
  syncAcceptFlag(db, deviceId);
}

/** The offer is settled (its key recorded): nothing stays approved. */
export function deleteHostKeyOffer(db: DB, deviceId: number): void {
  prepareCached(db, 'DELETE FROM device_host_key_offers WHERE device_id = ?').run(deviceId);
  syncAcceptFlag(db, deviceId);
}

/** devices.accept_host_key_change is only a mirror of "an approved offer exists", for the device's read model. */
function syncAcceptFlag(db: DB, deviceId: number): void {
  prepareCached(
    db,
    `UPDATE devices SET accept_host_key_change =
       EXISTS (SELECT 1 FROM device_host_key_offers o WHERE o.device_id = devices.id AND o.approved_at IS NOT NULL)
     WHERE id = ?`,
  ).run(deviceId);
}
