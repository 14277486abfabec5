// Backup records: recording results (snapshot first, then the record), imports, reading content back with its hash verified.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { withEngineSync, type DB } from '../../db/open';
import { runTransaction } from '../../db/statements';
import type { FailureType } from './failure-types';
import { changeFingerprint, importFingerprint, lenientFingerprint, sameConfiguration } from '../../templates/patterns';
import { SnapshotIntegrityError, type PreparedSnapshot, type SnapshotInfo, type SnapshotStore } from '../../store/snapshots';
import { ApiError } from '../../errors';
import { enqueueFinishedBackup } from '../notifications/notification-events.service';
import { judgeStoredVersion } from '../compliance/compliance.service';
import { queueGitMirror } from '../gitmirror/gitmirror.service';
import { inScope, type Principal, type Scope } from '../../identity/principal';
import { authorize } from '../../identity/policy';
import { BACKUP_OPS } from './backups.policy';
import { listAudit } from '../audit/audit.service';
import type { SourceEncoding } from '../../lib/decode';
import {
  getBackupRow,
  getHistoryHead,
  insertBackup,
  listDeviceBackupPage,
  listDeviceHistoryRows,
  listLatestSnapshotChunk,
  type LatestSnapshotChunk,
  latestSuccessfulFingerprint,
  lastChangedBackupRow,
  previousSuccessfulBackupId,
  reserveSnapshot,
  setDeviceLastBackup,
  updateFinishedBackup,
  upsertSnapshot,
  type BackupListRow,
  type BackupRow,
  type BackupTrigger,
} from './backups.store';

export interface StartedBackup {
  id: string;
  deviceId: number;
  templateId: number | null;
  startedAt: number;
}

/** Insert the record of a backup that is starting (finished_at null until it completes). */
export function startBackup(
  db: DB,
  deviceId: number,
  templateId: number | null,
  trigger: BackupTrigger,
  startedAt = Date.now(),
  changedBy: string | null = null,
): StartedBackup {
  const id = randomUUID();
  insertBackup(db, {
    id,
    device_id: deviceId,
    template_id: templateId,
    trigger,
    started_at: startedAt,
    finished_at: null,
    success: 0,
    error_message: null,
    failure_type: null,
    duration_ms: null,
    config_snapshot_hash: null,
    config_size: null,
    change_fingerprint: null,
    changed_by: changedBy,
  });
  return { id, deviceId, templateId, startedAt };
}

/**
 * The "changed" rule, the one place it lives (device backups, the CLI and imports all record through finishBackup):
 * a new successful version is a change when its fingerprint (changeFingerprint: the text without the lines the
 * template's ignore patterns match) differs from the previous successful version's. A device's first version is
 * not a change. Called inside the transaction that records the version.
 */
export function isChange(db: DB, started: StartedBackup, fingerprint: string, lenient: () => string): boolean {
  return versionKind(db, started, fingerprint, lenient).changed;
}

/**
 * A capture post-processed off the event loop (src/engine/capture): its change fingerprint, its lenient fingerprint
 * (templates/patterns.ts, compared once after a version imported from another tool) and the snapshot to write.
 */
export interface PreparedCapture {
  fingerprint: string;
  lenient: string;
  snapshot: PreparedSnapshot;
}

/**
 * isChange, and whether the version is the device's first (no earlier successful version): one read. After a version
 * imported from another tool, the comparison is sameConfiguration's (templates/patterns.ts), which asks for the
 * lenient fingerprint.
 */
function versionKind(db: DB, started: StartedBackup, fingerprint: string, lenient: () => string) {
  const previous = latestSuccessfulFingerprint(db, started.deviceId, started.id, started.startedAt);
  const changed = previous !== null && !sameConfiguration(previous, fingerprint, lenient);
  return { changed, first: previous === null };
}

/**
 * A successful outcome carries the stored text (imports, tests) or, from the engine, the capture already prepared in
 * a worker thread. `imported`: the text came from another tool (an import), fingerprinted with importFingerprint.
 * `encoding`: how the text was decoded when the bytes were not plain UTF-8 (lib/decode.ts).
 */
export type BackupOutcome =
  | { ok: true; text: string; ignorePatterns: readonly string[]; imported?: boolean; encoding?: SourceEncoding | null }
  | { ok: true; prepared: PreparedCapture; encoding?: SourceEncoding | null }
  | { ok: false; failure: FailureType; message: string };

/**
 * Name the snapshot hash of a running backup before its file is written (docs/snapshot-lifecycle.md), for a caller
 * that knows the hash when it opens the record (a collector's upload): in the caller's transaction, then passed to
 * finishBackup as `reserved`.
 */
export function nameRunningSnapshot(db: DB, backupId: string, hash: string): void {
  reserveSnapshot(db, backupId, hash);
}

/**
 * Complete a started backup (docs/snapshot-lifecycle.md). The running record names the snapshot's hash before the
 * file is written or reused (so no orphan sweep takes it), the text is written to the snapshot store (durably), then
 * the transaction that marks the record successful commits; a crash leaves at worst an unreferenced file.
 * Hashing, compression and the file writes run off the event loop (SnapshotStore.putAsync), and the record commits
 * without an fsync of its own (withEngineSync, db/open.ts): a fleet run finishes dozens of backups a second while
 * the same process answers HTTP. `onRecorded` runs inside the transaction that records the outcome (a collector's
 * lease is removed with it, so no crash can leave a stored result's lease to run out and queue the device again);
 * `reserved`: the hash the caller named in the running record when it opened it (reserveSnapshot), not named again.
 */
export async function finishBackup(
  db: DB,
  store: SnapshotStore,
  started: StartedBackup,
  outcome: BackupOutcome,
  finishedAt = Date.now(),
  opts: { onRecorded?: () => void; reserved?: string } = {},
): Promise<FinishedBackup> {
  const [finished] = await finishBackups(db, store, [{ started, outcome, finishedAt, ...opts }]);
  if ('error' in finished) throw finished.error;
  return finished;
}

/** One backup of a finishBackups batch: finishBackup's arguments. */
export interface BackupToFinish {
  started: StartedBackup;
  outcome: BackupOutcome;
  finishedAt: number;
  onRecorded?: () => void;
  reserved?: string;
}

/**
 * finishBackup for one backup or several whose records were opened together (a collector's batch of results): each
 * snapshot is written as finishBackup says, then every outcome whose file is on disk is recorded in one commit
 * (collectors-bench, #27: a commit per result rewrote the same pages of the backups and devices tables each time; a
 * batch of 14 costs a third less CPU per result). Answers per backup, in order: the finished backup, or the error its
 * snapshot write raised (that backup is not recorded: the caller closes it as it would a failed finishBackup). An
 * error of the commit itself rejects, with no outcome recorded.
 */
export async function finishBackups(db: DB, store: SnapshotStore, items: readonly BackupToFinish[]): Promise<(FinishedBackup | { error: unknown })[]> {
  const stored: ({ snap: SnapshotInfo; fingerprint: string } | null | { error: unknown })[] = [];
  for (const { started, outcome, reserved } of items) {
    if (!outcome.ok) {
      stored.push(null);
      continue;
    }
    // Computed before the transaction: the write lock is not held while the text is hashed. A caller that named the
    // hash in the start record already (`reserved`: a collector's upload carries it) saves that commit.
    const reserve = (hash: string) => (hash === reserved ? undefined : withEngineSync(db, () => reserveSnapshot(db, started.id, hash)));
    try {
      stored.push(
        'prepared' in outcome
          ? { fingerprint: outcome.prepared.fingerprint, snap: await store.putPrepared(outcome.prepared.snapshot, reserve) }
          : { fingerprint: changeFingerprint(outcome.text, outcome.ignorePatterns), snap: await store.putAsync(outcome.text, reserve) },
      );
    } catch (error) {
      stored.push({ error });
    }
  }
  const out = withEngineSync(db, () =>
    db
      .transaction(() =>
        items.map((it, i) => {
          const s = stored[i];
          return s && 'error' in s ? s : recordFinishedRows(db, it.started, it.outcome, s, it.finishedAt, it.onRecorded);
        }),
      )
      .immediate(),
  );
  // Committed: each version is judged in the background (compliance workers); the backup does not wait for it.
  for (const f of out) if ('success' in f && f.success) judgeStoredVersion(db, store, f.id);
  return out;
}

/**
 * finishBackup for a caller that must record inside its own transaction (imports: the record and its audit row
 * commit together), so the snapshot is written synchronously. Same file, same record, same guarantees.
 */
export function finishBackupSync(
  db: DB,
  store: SnapshotStore,
  started: StartedBackup,
  outcome: Exclude<BackupOutcome, { prepared: PreparedCapture }>,
  finishedAt = Date.now(),
): FinishedBackup {
  if (!outcome.ok) return recordFinishedBackup(db, started, outcome, null, finishedAt);
  const fingerprint = (outcome.imported ? importFingerprint : changeFingerprint)(outcome.text, outcome.ignorePatterns);
  const snap = store.put(outcome.text, (hash) => reserveSnapshot(db, started.id, hash));
  return recordFinishedBackup(db, started, outcome, { snap, fingerprint }, finishedAt);
}

/** `first`: the device's first stored version (which is never a change). */
export type FinishedBackup =
  { id: string; success: true; changed: boolean; first: boolean; hash: string } | { id: string; success: false; changed: false; first: false; hash: null };

/** The record transaction of finishBackupSync (recordFinishedRows in a transaction of its own, or the caller's). */
function recordFinishedBackup(
  db: DB,
  started: StartedBackup,
  outcome: BackupOutcome,
  stored: { snap: SnapshotInfo; fingerprint: string } | null,
  finishedAt: number,
): FinishedBackup {
  return db.transaction(() => recordFinishedRows(db, started, outcome, stored, finishedAt)).immediate();
}

/** The rows that record a backup's outcome, in the caller's transaction: `stored` is the snapshot already on disk (null for a failure). */
function recordFinishedRows(
  db: DB,
  started: StartedBackup,
  outcome: BackupOutcome,
  stored: { snap: SnapshotInfo; fingerprint: string } | null,
  finishedAt: number,
  onRecorded?: () => void,
): FinishedBackup {
  const duration = Math.max(0, finishedAt - started.startedAt);
  if (!outcome.ok || !stored) {
    updateFinishedBackup(db, started.id, {
      finished_at: finishedAt,
      success: 0,
      error_message: outcome.ok ? null : outcome.message,
      failure_type: outcome.ok ? null : outcome.failure,
      duration_ms: duration,
      config_snapshot_hash: null,
      config_size: null,
      change_fingerprint: null,
      changed: 0,
      source_encoding: null,
    });
    setDeviceLastBackup(db, started.deviceId, started.id);
    enqueueFinishedBackup(db, started.id, finishedAt);
    onRecorded?.();
    return { id: started.id, success: false, changed: false, first: false, hash: null };
  }
  const { snap, fingerprint } = stored;
  upsertSnapshot(db, snap);
  const lenient = () => ('prepared' in outcome ? outcome.prepared.lenient : lenientFingerprint(outcome.text, outcome.ignorePatterns));
  const { changed, first } = versionKind(db, started, fingerprint, lenient);
  updateFinishedBackup(db, started.id, {
    finished_at: finishedAt,
    success: 1,
    error_message: null,
    failure_type: null,
    duration_ms: duration,
    config_snapshot_hash: snap.hash,
    config_size: snap.size,
    change_fingerprint: fingerprint,
    changed: changed ? 1 : 0,
    source_encoding: outcome.encoding ?? null,
  });
  setDeviceLastBackup(db, started.deviceId, started.id);
  enqueueFinishedBackup(db, started.id, finishedAt);
  queueGitMirror(db, started.id, finishedAt);
  onRecorded?.();
  return { id: started.id, success: true, changed, first, hash: snap.hash };
}

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
