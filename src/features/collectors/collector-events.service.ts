// Syslog change events of remote zones (docs/collectors.md): which zone a device is in, and an event backup queued for its collector.
import type { DB } from '../../db/open';
import { effectiveZoneRows, getWorkByDevice, queueWorkRow } from './collectors.store';

/** Each given device's zone; devices of the central appliance itself are not in the map. */
export function deviceZones(db: DB, deviceIds: readonly number[]): Map<number, string> {
  if (deviceIds.length === 0) return new Map();
  return new Map(effectiveZoneRows(db, deviceIds).map((z) => [z.device_id, z.zone]));
}

/**
 * An event backup of one device: 'central' when the central backs it up itself (nothing done here); 'queued' when it
 * waits for its zone's collector now (queued here, or queued already and not leased yet: that backup will see the
 * change); 'leased' when its collector is backing it up right now (it may read the configuration from before the
 * change: the caller asks again later).
 */
export function queueZonedEventBackup(db: DB, deviceId: number, at = Date.now()): 'central' | 'queued' | 'leased' {
  const zone = deviceZones(db, [deviceId]).get(deviceId);
  if (zone === undefined) return 'central';
  return db
    .transaction(() => {
      const work = getWorkByDevice(db, deviceId);
      if (work?.lease_id && (work.lease_expires_at ?? 0) >= at) return 'leased' as const;
      queueWorkRow(db, deviceId, zone, 'event', at);
      return 'queued' as const;
    })
    .immediate();
}
