// Backup records read back: history pages, a version's content with its hash verified, the last change; recording them is backup-record.service.ts.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import { runTransaction } from '../../db/statements';
import { SnapshotIntegrityError, type SnapshotStore } from '../../store/snapshots';
import { ApiError } from '../../errors';
import { inScope, type Principal, type Scope } from '../../identity/principal';
import { authorize } from '../../identity/policy';
import { BACKUP_OPS } from './backups.policy';
import { listAudit } from '../audit/audit.service';
import {
  getBackupRow,
  getHistoryHead,
  listDeviceBackupPage,
  listDeviceHistoryRows,
  listLatestSnapshotChunk,
  type LatestSnapshotChunk,
  lastChangedBackupRow,
  previousSuccessfulBackupId,
  type BackupListRow,
  type BackupRow,
} from './backups.store';

/**
 * Read a backup's configuration text. Null when the record has no usable text: a failed backup, or a
 * snapshot that is missing or fails its hash check (logged as an integrity error, never the text).
 */
export function readBackupText(store: SnapshotStore, log: Logger | null, row: Pick<BackupRow, 'id' | 'success' | 'config_snapshot_hash'>): string | null {
  if (!row.success || !row.config_snapshot_hash) return null;
  try {
    const text = store.read(row.config_snapshot_hash);
    if (text === null) log?.error({ backup_id: row.id, hash: row.config_snapshot_hash }, 'snapshot file missing');
    return text;
  } catch (err) {
    if (err instanceof SnapshotIntegrityError) {
      log?.error({ backup_id: row.id, hash: row.config_snapshot_hash, problem: err.message }, 'snapshot integrity error');
      return null;
    }
    throw err;
  }
}

export { getBackupRow };

/** A device's history as the public API sees it before reading any record: its size and version (schema/0005). */
export interface HistoryHead {
  total: number;
  /** Changes with any change to the device's records; null while it has never had one. */
  version: number | null;
}

/**
 * The device a history request names, checked (spec 4.3): missing, BACKUP_DEVICE_NOT_FOUND; outside the
 * scope, BACKUP_DEVICE_FORBIDDEN. One indexed read, the only one a page already rendered at this version needs.
 */
export function checkDeviceHistory(db: DB, scope: Scope, deviceId: number): HistoryHead {
  const head = getHistoryHead(db, deviceId);
  if (!head) throw new ApiError('BACKUP_DEVICE_NOT_FOUND', `Device ${deviceId} does not exist`);
  if (!inScope(scope, head.group_id)) {
    throw new ApiError('BACKUP_DEVICE_FORBIDDEN', `Device ${deviceId} is outside your device-group scope`);
  }
  return { total: head.total, version: head.version };
}

/**
 * One page of a device's history for the public API (spec 4.3), with the checks of checkDeviceHistory. The
 * page, its total and the version they belong to come from one read transaction, so a backup finishing in
 * between cannot make them disagree.
 */
export function listDeviceBackups(db: DB, scope: Scope, deviceId: number, page: number, limit: number): HistoryHead & { items: BackupListRow[] } {
  return runTransaction(db, readHistoryPage, scope, deviceId, page, limit);
}

function readHistoryPage(db: DB, scope: Scope, deviceId: number, page: number, limit: number): HistoryHead & { items: BackupListRow[] } {
  const head = checkDeviceHistory(db, scope, deviceId);
  return { ...head, items: listDeviceBackupPage(db, deviceId, (page - 1) * limit, limit, head.total) };
}

/**
 * The configuration text of a backup for the public API (spec 4.4), or null when the record has no usable
 * text. Missing record: BACKUP_NOT_FOUND; owning device outside the scope: BACKUP_DEVICE_FORBIDDEN.
 */
export function getBackupContent(db: DB, store: SnapshotStore, log: Logger | null, reader: Principal, backupId: string): string | null {
  authorize(reader, BACKUP_OPS.content);
  return readBackupText(store, log, getBackupRowFor(db, reader.scope, backupId));
}

/** A backup record by id, its device inside the scope: BACKUP_NOT_FOUND when missing, BACKUP_DEVICE_FORBIDDEN outside. */
export function getBackupRowFor(db: DB, scope: Scope, backupId: string): BackupRow & { group_id: number | null } {
  const row = getBackupRow(db, backupId);
  if (!row) throw new ApiError('BACKUP_NOT_FOUND', `Backup ${backupId} does not exist`);
  if (!inScope(scope, row.group_id)) {
    throw new ApiError('BACKUP_DEVICE_FORBIDDEN', `The device of backup ${backupId} is outside your device-group scope`);
  }
  return row;
}

/** Like listDeviceBackups, with every column of the records (the web interface's history table). */
export function listDeviceHistory(db: DB, scope: Scope, deviceId: number, page: number, limit: number): { items: BackupRow[]; total: number } {
  return db.transaction(() => {
    const { total } = checkDeviceHistory(db, scope, deviceId);
    return { items: listDeviceHistoryRows(db, deviceId, (page - 1) * limit, limit), total };
  })();
}

/**
 * A backup record of a given device, with its text (null when it has none). The record must belong to that
 * device and the device must be in the scope: a diff or view can never reach another device's text by id.
 */
export function getDeviceBackup(
  db: DB,
  store: SnapshotStore,
  log: Logger | null,
  scope: Scope,
  deviceId: number,
  backupId: string,
): { row: BackupRow; text: string | null } {
  const row = getDeviceBackupRow(db, scope, deviceId, backupId);
  return { row, text: readBackupText(store, log, row) };
}

/** The record of getDeviceBackup without reading its text (large texts are read off the event loop, features/configs/diff.service.ts). */
export function getDeviceBackupRow(db: DB, scope: Scope, deviceId: number, backupId: string): BackupRow {
  const row = getBackupRow(db, backupId);
  if (!row || row.device_id !== deviceId) throw new ApiError('BACKUP_NOT_FOUND', `Backup ${backupId} of device ${deviceId} does not exist`);
  if (!inScope(scope, row.group_id)) throw new ApiError('BACKUP_DEVICE_FORBIDDEN', `The device of backup ${backupId} is outside your device-group scope`);
  return row;
}

/** Newest successful backup of the next `limit` devices by name after `afterName` in the scope, for configuration search. */
export function listLatestSnapshots(db: DB, scope: Scope, afterName: string | null, limit: number): LatestSnapshotChunk {
  return listLatestSnapshotChunk(db, scope.all ? null : [...scope.groupIds], afterName, limit);
}

/** The newest backup of a device that recorded a change ("last change" on the device page), scope checked. */
export function getLastChange(db: DB, scope: Scope, deviceId: number): BackupRow | null {
  checkDeviceHistory(db, scope, deviceId);
  return lastChangedBackupRow(db, deviceId) ?? null;
}

/**
 * For each successful row of a history page (newest first), the successful version before it: the next one on
 * the page, else (for the page's oldest ones) one indexed read. What "compare with previous" links to.
 */
export function previousVersions(db: DB, scope: Scope, deviceId: number, rows: readonly BackupRow[]): Map<string, string> {
  checkDeviceHistory(db, scope, deviceId);
  const out = new Map<string, string>();
  let older: string | undefined;
  const oldest = rows[rows.length - 1];
  if (oldest) older = previousSuccessfulBackupId(db, deviceId, oldest.started_at, oldest.id);
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (!r.success || !r.config_snapshot_hash) continue;
    if (older) out.set(r.id, older);
    older = r.id;
  }
  return out;
}

/** How far before a backup's start its "backup.run" audit row is looked for (a queued run waits its turn). */
const START_WINDOW_MS = 10 * 60_000;

/**
 * Who or what started a backup, in words: the schedule, a change the device reported, an import, or the person
 * whose "backup.run" audit row for the device precedes it (their name and door: web, api, cli).
 */
export function describeBackupStart(db: DB, scope: Scope, row: Pick<BackupRow, 'device_id' | 'trigger' | 'started_at' | 'changed_by'>): string {
  if (row.trigger === 'schedule') return 'the schedule';
  if (row.trigger === 'event') return `a configuration change the device reported${row.changed_by ? ` (made by ${row.changed_by})` : ''}`;
  if (row.trigger === 'import') return 'an import of a stored configuration';
  const target = `device ${row.device_id}`;
  const rows = listAudit(db, scope, { action: 'backup.run', since: row.started_at - START_WINDOW_MS, until: row.started_at + 1000 }, 1, 50).items;
  // One device's run names it as the target; a console run of a group or of all devices lists the ids it held.
  const run = rows.find((r) => r.target === target || runListsDevice(r.details, row.device_id));
  const door = { manual: 'web', api: 'api', cli: 'cli' }[row.trigger];
  return run ? `${run.actor} (${run.door})` : `a request through the ${door} (no matching audit row)`;
}

function runListsDevice(details: string, deviceId: number): boolean {
  try {
    const ids = (JSON.parse(details) as { device_ids?: unknown }).device_ids;
    return Array.isArray(ids) && ids.includes(deviceId);
  } catch {
    return false;
  }
}
