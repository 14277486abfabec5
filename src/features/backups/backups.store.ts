// Queries for backup records and snapshot metadata.
import type { DB } from '../../db/open';

export type BackupTrigger = 'schedule' | 'manual' | 'cli' | 'import' | 'api';

export interface BackupRow {
  id: string;
  device_id: number;
  template_id: number | null;
  trigger: BackupTrigger;
  started_at: number;
  finished_at: number | null;
  success: number;
  error_message: string | null;
  failure_type: string | null;
  duration_ms: number | null;
  config_snapshot_hash: string | null;
  config_size: number | null;
  change_fingerprint: string | null;
  changed: number;
}

/** The columns the public API shows, in the order of the history index. */
export type BackupListRow = Pick<BackupRow, 'id' | 'started_at' | 'finished_at' | 'success' | 'error_message' | 'config_snapshot_hash'>;

const LIST_COLUMNS = 'id, started_at, finished_at, success, error_message, config_snapshot_hash';

export function insertBackup(db: DB, r: Omit<BackupRow, 'changed'> & { changed?: number }): void {
  db.prepare(
    `INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
                          duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed)
     VALUES (@id, @device_id, @template_id, @trigger, @started_at, @finished_at, @success, @error_message, @failure_type,
             @duration_ms, @config_snapshot_hash, @config_size, @change_fingerprint, @changed)`,
  ).run({ changed: 0, ...r });
}

export function updateFinishedBackup(
  db: DB,
  id: string,
  f: Pick<BackupRow, 'finished_at' | 'success' | 'error_message' | 'failure_type' | 'duration_ms' | 'config_snapshot_hash' | 'config_size' | 'change_fingerprint' | 'changed'>,
): void {
  db.prepare(
    `UPDATE backups SET finished_at = @finished_at, success = @success, error_message = @error_message, failure_type = @failure_type,
            duration_ms = @duration_ms, config_snapshot_hash = @config_snapshot_hash, config_size = @config_size,
            change_fingerprint = @change_fingerprint, changed = @changed
      WHERE id = @id`,
  ).run({ ...f, id });
}

export function getBackupRow(db: DB, id: string): (BackupRow & { group_id: number | null }) | undefined {
  return db
    .prepare('SELECT b.*, d.group_id FROM backups b JOIN devices d ON d.id = b.device_id WHERE b.id = ?')
    .get(id) as (BackupRow & { group_id: number | null }) | undefined;
}

export function countDeviceBackups(db: DB, deviceId: number): number {
  return db.prepare('SELECT count(*) FROM backups WHERE device_id = ?').pluck().get(deviceId) as number;
}

/**
 * One page of a device's history, newest first. Pages in the older half are read from the other end of
 * the index (ascending, then reversed), so the last page costs the same as the first.
 */
export function listDeviceBackupPage(db: DB, deviceId: number, offset: number, limit: number, total: number): BackupListRow[] {
  if (offset >= total) return [];
  if (offset * 2 <= total) {
    return db
      .prepare(`SELECT ${LIST_COLUMNS} FROM backups WHERE device_id = ? ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(deviceId, limit, offset) as BackupListRow[];
  }
  const take = Math.min(limit, total - offset);
  const fromEnd = total - offset - take;
  const rows = db
    .prepare(`SELECT ${LIST_COLUMNS} FROM backups WHERE device_id = ? ORDER BY started_at ASC, id ASC LIMIT ? OFFSET ?`)
    .all(deviceId, take, fromEnd) as BackupListRow[];
  return rows.reverse();
}

export function latestSuccessfulFingerprint(db: DB, deviceId: number, excludeId: string): string | null {
  const v = db
    .prepare(
      `SELECT change_fingerprint FROM backups
        WHERE device_id = ? AND success = 1 AND id <> ? AND finished_at IS NOT NULL
        ORDER BY started_at DESC, id DESC LIMIT 1`,
    )
    .pluck()
    .get(deviceId, excludeId) as string | null | undefined;
  return v ?? null;
}

export function upsertSnapshot(db: DB, s: { hash: string; size: number; stored_size: number; compressed: boolean }): void {
  db.prepare(
    `INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (hash) DO NOTHING`,
  ).run(s.hash, s.size, s.stored_size, s.compressed ? 1 : 0, Date.now());
}

export function setDeviceLastBackup(db: DB, deviceId: number, backupId: string): void {
  db.prepare('UPDATE devices SET last_backup_id = ? WHERE id = ?').run(backupId, deviceId);
}

export function runningBackupForDevice(db: DB, deviceId: number): string | undefined {
  return db.prepare('SELECT id FROM backups WHERE device_id = ? AND finished_at IS NULL').pluck().get(deviceId) as string | undefined;
}

/** Close records a crash left running; returns how many. */
export function closeInterruptedBackups(db: DB, at: number): number {
  return db
    .prepare(
      `UPDATE backups SET finished_at = @at, success = 0, failure_type = 'INTERRUPTED',
              error_message = 'Interrupted: the appliance stopped before this backup finished',
              duration_ms = @at - started_at
        WHERE finished_at IS NULL`,
    )
    .run({ at }).changes;
}
