// Queries for backup records and snapshot metadata.
import { GenerationMemo } from '../../db/generation';
import type { DB } from '../../db/open';
import type { SourceEncoding } from '../../lib/decode';
import { explainQueryPlan, prepareCached, statementSet } from '../../db/statements';

/** What started a backup; 'event': the device reported a configuration change (syslog, schema 0013). */
export type BackupTrigger = 'schedule' | 'manual' | 'cli' | 'import' | 'api' | 'event';

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
  /** Who changed the device, as its change message named them (event backups only; schema 0013). */
  changed_by: string | null;
  /** How the text was decoded from bytes that were not plain UTF-8 (schema 0018, src/lib/decode.ts); null: they were. */
  source_encoding: SourceEncoding | null;
}

/** The columns the public API shows, in the order of the history index. */
export type BackupListRow = Pick<BackupRow, 'id' | 'started_at' | 'finished_at' | 'success' | 'error_message' | 'config_snapshot_hash'>;

const LIST_COLUMNS = 'id, started_at, finished_at, success, error_message, config_snapshot_hash';

/** The statements of the public API's read paths, prepared once per database handle (they run on every request). */
function prepareReadStatements(db: DB) {
  return {
    // Raw rows (arrays): better-sqlite3 builds a row object per record more slowly than a JS literal of fixed shape.
    pageNewest: db.prepare(`SELECT ${LIST_COLUMNS} FROM backups WHERE device_id = ? ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`).raw(),
    pageOldest: db.prepare(`SELECT ${LIST_COLUMNS} FROM backups WHERE device_id = ? ORDER BY started_at ASC, id ASC LIMIT ? OFFSET ?`).raw(),
    backupWithGroup: db.prepare('SELECT b.*, d.group_id FROM backups b JOIN devices d ON d.id = b.device_id WHERE b.id = ?'),
    historyHead: db
      .prepare('SELECT d.group_id, ifnull(c.total, 0), c.version FROM devices d LEFT JOIN device_backup_counts c ON c.device_id = d.id WHERE d.id = ?')
      .raw(),
  };
}

const readStatements = statementSet(prepareReadStatements);

/** The query plan of one of the read statements above, run with `args` (for the query-plan tests). */
export function explainReadStatement(db: DB, name: keyof ReturnType<typeof prepareReadStatements>, ...args: unknown[]): string[] {
  return explainQueryPlan(db, readStatements(db)[name].source, args);
}

/**
 * What a history request needs before any record: the device's group (for the scope check), its record count and
 * the version of its history (schema/0005; null while it has never had a record). Undefined: no such device.
 */
export interface HistoryHeadRow {
  group_id: number | null;
  total: number;
  version: number | null;
}

const headMemo = new GenerationMemo<number, HistoryHeadRow | undefined>(20_000);

/** Read again only once the database generation has moved (src/db/generation.ts); always read in a transaction. */
export function getHistoryHead(db: DB, deviceId: number): HistoryHeadRow | undefined {
  return headMemo.get(db, deviceId, readHistoryHead);
}

function readHistoryHead(db: DB, deviceId: number): HistoryHeadRow | undefined {
  const r = readStatements(db).historyHead.get(deviceId) as [number | null, number, number | null] | undefined;
  return r && { group_id: r[0], total: r[1], version: r[2] };
}

export function insertBackup(
  db: DB,
  r: Omit<BackupRow, 'changed' | 'changed_by' | 'source_encoding'> & { changed?: number; changed_by?: string | null },
): void {
  prepareCached(
    db,
    `INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
                          duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed, changed_by)
     VALUES (@id, @device_id, @template_id, @trigger, @started_at, @finished_at, @success, @error_message, @failure_type,
             @duration_ms, @config_snapshot_hash, @config_size, @change_fingerprint, @changed, @changed_by)`,
  ).run({ changed: 0, changed_by: null, ...r });
}

export function updateFinishedBackup(
  db: DB,
  id: string,
  f: Pick<
    BackupRow,
    | 'finished_at'
    | 'success'
    | 'error_message'
    | 'failure_type'
    | 'duration_ms'
    | 'config_snapshot_hash'
    | 'config_size'
    | 'change_fingerprint'
    | 'changed'
    | 'source_encoding'
  >,
): void {
  prepareCached(
    db,
    `UPDATE backups SET finished_at = @finished_at, success = @success, error_message = @error_message, failure_type = @failure_type,
            duration_ms = @duration_ms, config_snapshot_hash = @config_snapshot_hash, config_size = @config_size,
            change_fingerprint = @change_fingerprint, changed = @changed, source_encoding = @source_encoding
      WHERE id = @id`,
  ).run({ ...f, id });
}

export function getBackupRow(db: DB, id: string): (BackupRow & { group_id: number | null }) | undefined {
  return readStatements(db).backupWithGroup.get(id) as (BackupRow & { group_id: number | null }) | undefined;
}

/**
 * One page of a device's history, newest first. Pages in the older half are read from the other end of
 * the index (ascending, then reversed), so the last page costs the same as the first.
 */
export function listDeviceBackupPage(db: DB, deviceId: number, offset: number, limit: number, total: number): BackupListRow[] {
  if (offset >= total) return [];
  if (offset * 2 <= total) return (readStatements(db).pageNewest.all(deviceId, limit, offset) as RawListRow[]).map(listRow);
  const take = Math.min(limit, total - offset);
  const fromEnd = total - offset - take;
  const rows = readStatements(db).pageOldest.all(deviceId, take, fromEnd) as RawListRow[];
  return rows.reverse().map(listRow);
}

type RawListRow = [string, number, number | null, number, string | null, string | null];

/** A raw row of LIST_COLUMNS as a BackupListRow (same order). */
function listRow(r: RawListRow): BackupListRow {
  return { id: r[0], started_at: r[1], finished_at: r[2], success: r[3], error_message: r[4], config_snapshot_hash: r[5] };
}

/** Fingerprint of the newest successful backup that started before `before` (the one a new version is compared with). */
export function latestSuccessfulFingerprint(db: DB, deviceId: number, excludeId: string, before: number): string | null {
  const row = prepareCached(
    db,
    `SELECT change_fingerprint FROM backups
      WHERE device_id = ? AND success = 1 AND id <> ? AND finished_at IS NOT NULL AND started_at <= ?
      ORDER BY started_at DESC, id DESC LIMIT 1`,
  ).get(deviceId, excludeId, before) as { change_fingerprint: string | null } | undefined;
  return row?.change_fingerprint ?? null;
}

export function upsertSnapshot(db: DB, s: { hash: string; size: number; stored_size: number; compressed: boolean }): void {
  prepareCached(
    db,
    `INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (hash) DO NOTHING`,
  ).run(s.hash, s.size, s.stored_size, s.compressed ? 1 : 0, Date.now());
}

/**
 * Name the snapshot a running backup is about to write or reuse, before the file is touched: from this commit on,
 * an orphan sweep in any process sees the hash as referenced (docs/snapshot-lifecycle.md).
 */
export function reserveSnapshot(db: DB, backupId: string, hash: string): void {
  prepareCached(db, 'UPDATE backups SET config_snapshot_hash = ? WHERE id = ? AND finished_at IS NULL').run(hash, backupId);
}

/** Name the device's last backup, with its start and outcome (the device list sorts and filters on them, 0028). */
export function setDeviceLastBackup(db: DB, deviceId: number, backupId: string): void {
  prepareCached(
    db,
    `UPDATE devices SET last_backup_id = b.id, last_backup_started_at = b.started_at, last_backup_success = b.success
       FROM (SELECT id, started_at, success FROM backups WHERE id = @backupId) b WHERE devices.id = @deviceId`,
  ).run({ backupId, deviceId });
}

/** Copy every named last backup's start and outcome onto its device (seeds that name last_backup_id in bulk). */
export function copyDevicesLastBackup(db: DB): void {
  db.prepare(
    `UPDATE devices SET last_backup_started_at = b.started_at, last_backup_success = b.success
       FROM backups b WHERE b.id = devices.last_backup_id`,
  ).run();
}

export function runningBackupForDevice(db: DB, deviceId: number): string | undefined {
  return db.prepare('SELECT id FROM backups WHERE device_id = ? AND finished_at IS NULL').pluck().get(deviceId) as string | undefined;
}

/**
 * Close records a crash left running (those started before `startedBefore`); returns how many. The unary `+`
 * keeps SQLite off backups_started, which it otherwise picks for the range: that walks every record
 * (350 ms under the write lock at 1.1 M records) where the partial index backups_running holds only the open ones.
 */
export function closeInterruptedBackups(db: DB, at: number, startedBefore = at): number {
  return db
    .prepare(
      `UPDATE backups SET finished_at = @at, success = 0, failure_type = 'INTERRUPTED', config_snapshot_hash = NULL,
              error_message = 'Interrupted: the appliance stopped before this backup finished',
              duration_ms = @at - started_at
        WHERE finished_at IS NULL AND +started_at <= @before`,
    )
    .run({ at, before: startedBefore }).changes;
}

/** One page of a device's history with every column the web interface shows (trigger, failure type, change flag), newest first. */
export function listDeviceHistoryRows(db: DB, deviceId: number, offset: number, limit: number): BackupRow[] {
  return db.prepare(`SELECT * FROM backups WHERE device_id = ? ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`).all(deviceId, limit, offset) as BackupRow[];
}

/** The newest successful backup of each device in `deviceIds` (a JSON array), with its snapshot hash. */
export interface LatestSnapshotRow {
  device_id: number;
  device_name: string;
  backup_id: string;
  started_at: number;
  config_snapshot_hash: string;
}

/** One run of devices by name for the configuration search: each with its newest successful backup, if it has one. */
export interface LatestSnapshotChunk {
  rows: LatestSnapshotRow[];
  /** The name of the run's last device (with or without a backup): where the next run starts; null when no device follows. */
  lastName: string | null;
}

/**
 * The newest successful backup of the next `limit` devices in the scope (null groupIds: all devices) whose name
 * sorts after `afterName` (null: from the first), by name. A keyset walk of the name index: a search that finds its
 * hits among the first devices reads only those, however large the inventory. Each device reads the head of its
 * backups_device_history range until its first success.
 */
export function listLatestSnapshotChunk(db: DB, groupIds: readonly number[] | null, afterName: string | null, limit: number): LatestSnapshotChunk {
  const conds = [afterName === null ? '' : 'd.name > @after', groupIds === null ? '' : 'd.group_id IN (SELECT value FROM json_each(@groups))'].filter(Boolean);
  const rows = prepareCached(
    db,
    `SELECT x.device_id, x.device_name, b.id AS backup_id, b.started_at, b.config_snapshot_hash
       FROM (SELECT d.id AS device_id, d.name AS device_name,
                    (SELECT b.id FROM backups b WHERE b.device_id = d.id AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL
                      ORDER BY b.started_at DESC, b.id DESC LIMIT 1) AS backup_id
               FROM devices d ${conds.length ? `WHERE ${conds.join(' AND ')}` : ''}
              ORDER BY d.name LIMIT @limit) x
       LEFT JOIN backups b ON b.id = x.backup_id
      ORDER BY x.device_name`,
  ).all({
    limit,
    ...(afterName === null ? {} : { after: afterName }),
    ...(groupIds === null ? {} : { groups: JSON.stringify(groupIds) }),
  }) as (Omit<LatestSnapshotRow, 'backup_id'> & { backup_id: string | null })[];
  return {
    rows: rows.filter((r): r is LatestSnapshotRow => r.backup_id !== null),
    lastName: rows.length === limit ? rows[rows.length - 1].device_name : null,
  };
}

/** The newest backup of a device that recorded a change (the device page's "last change"); walks backups_device_history. */
export function lastChangedBackupRow(db: DB, deviceId: number): BackupRow | undefined {
  return prepareCached(db, 'SELECT * FROM backups WHERE device_id = ? AND changed = 1 ORDER BY started_at DESC, id DESC LIMIT 1').get(deviceId) as
    BackupRow | undefined;
}

/** The id of the newest successful backup of a device older than (started_at, id): what "compare with previous" compares with. */
export function previousSuccessfulBackupId(db: DB, deviceId: number, startedAt: number, id: string): string | undefined {
  return prepareCached(
    db,
    `SELECT id FROM backups WHERE device_id = ? AND success = 1 AND config_snapshot_hash IS NOT NULL AND (started_at < ? OR (started_at = ? AND id < ?))
      ORDER BY started_at DESC, id DESC LIMIT 1`,
  )
    .pluck()
    .get(deviceId, startedAt, startedAt, id) as string | undefined;
}

/** Whether the device has a backup started at `startedAt` with this snapshot (an imported version already there). */
export function backupExistsAt(db: DB, deviceId: number, startedAt: number, hash: string): boolean {
  return (
    prepareCached(db, 'SELECT 1 FROM backups WHERE device_id = ? AND started_at = ? AND config_snapshot_hash = ?').get(deviceId, startedAt, hash) !== undefined
  );
}
