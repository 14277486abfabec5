// Recording a backup (docs/snapshot-lifecycle.md): the running record, its snapshot's hash named before the file is written, the outcome recorded once the file is on disk; one backup or a collector's batch, and imports inside their own transaction.
import { randomUUID } from 'node:crypto';
import { withEngineSync, type DB } from '../../db/open';
import type { FailureType } from './failure-types';
import { changeFingerprint, importFingerprint, lenientFingerprint, sameConfiguration } from '../../templates/patterns';
import type { PreparedSnapshot, SnapshotInfo, SnapshotStore } from '../../store/snapshots';
import { enqueueFinishedBackup } from '../notifications/notification-events.service';
import { judgeStoredVersion } from '../compliance/compliance.service';
import { queueGitMirror } from '../gitmirror/gitmirror.service';
import type { SourceEncoding } from '../../lib/decode';
import {
  insertBackup,
  latestSuccessfulFingerprint,
  reserveSnapshot,
  setDeviceLastBackup,
  updateFinishedBackup,
  upsertSnapshot,
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
