// Queries behind the /metrics gauges: counts by state read at scrape time (index or counter-table reads, no scan of backups per row).
import type { DB } from '../../db/open';
import { statementSet } from '../../db/statements';

export interface DeviceStateCounts {
  reachable: number;
  unreachable: number;
  unknown: number;
  enabled: number;
  disabled: number;
  held: number;
}

export interface StorageCounts {
  db_pages: number;
  db_page_size: number;
  db_freelist_pages: number;
  snapshot_files: number;
  snapshot_bytes: number;
}

function prepareStatements(db: DB) {
  return {
    devices: db.prepare(
      `SELECT ifnull(sum(reachability = 'reachable'), 0) AS reachable,
              ifnull(sum(reachability = 'unreachable'), 0) AS unreachable,
              ifnull(sum(reachability = 'unknown'), 0) AS unknown,
              ifnull(sum(enabled = 1), 0) AS enabled,
              ifnull(sum(enabled = 0), 0) AS disabled,
              (SELECT count(*) FROM device_credential_holds) AS held
         FROM devices`,
    ),
    // Enabled devices whose newest successful backup (or, with none, their creation) is older than the cut-off:
    // the rule of the stale notification (notifications.store staleDeviceIds), counted. The newest success is read
    // from the top of backups_device_history (newest first) instead of MAX over every record of the device:
    // 10,000 devices with 100 records each took 50 ms with MAX, and a few with this.
    stale: db.prepare(
      `SELECT count(*) FROM devices d WHERE d.enabled = 1
         AND COALESCE((SELECT b.finished_at FROM backups b WHERE b.device_id = d.id AND b.success = 1
                        ORDER BY b.started_at DESC, b.id DESC LIMIT 1), d.created_at) < ?`,
    ),
    // Running records of every process (the server's and any CLI run), from the partial index of running backups.
    running: db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NULL'),
    deliveries: db.prepare('SELECT status, count(*) AS n FROM notification_deliveries GROUP BY status'),
    snapshots: db.prepare('SELECT files, bytes_stored FROM snapshot_totals WHERE id = 1'),
  };
}

// Prepared once per database handle; a closed handle's entry goes with it.
const stmts = statementSet(prepareStatements);

export function countDevicesByState(db: DB): DeviceStateCounts {
  return stmts(db).devices.get() as DeviceStateCounts;
}

export function countStaleDevices(db: DB, before: number): number {
  return stmts(db).stale.pluck().get(before) as number;
}

export function countRunningBackups(db: DB): number {
  return stmts(db).running.pluck().get() as number;
}

export function countDeliveriesByStatus(db: DB): Record<string, number> {
  const out: Record<string, number> = { pending: 0, sent: 0, dead: 0 };
  for (const r of stmts(db).deliveries.all() as { status: string; n: number }[]) out[r.status] = r.n;
  return out;
}

export function readStorageCounts(db: DB): StorageCounts {
  const snap = (stmts(db).snapshots.get() as { files: number; bytes_stored: number } | undefined) ?? { files: 0, bytes_stored: 0 };
  return {
    db_pages: db.pragma('page_count', { simple: true }) as number,
    db_page_size: db.pragma('page_size', { simple: true }) as number,
    db_freelist_pages: db.pragma('freelist_count', { simple: true }) as number,
    snapshot_files: snap.files,
    snapshot_bytes: snap.bytes_stored,
  };
}
