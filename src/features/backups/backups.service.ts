// Backup records: recording results (snapshot first, then the record), imports, reading content back with its hash verified.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { FailureType } from '../../engine/types';
import { SnapshotIntegrityError, type SnapshotStore } from '../../store/snapshots';
import {
  getBackupRow,
  insertBackup,
  latestSuccessfulFingerprint,
  setDeviceLastBackup,
  updateFinishedBackup,
  upsertSnapshot,
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
export function startBackup(db: DB, deviceId: number, templateId: number | null, trigger: BackupTrigger, startedAt = Date.now()): StartedBackup {
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
  });
  return { id, deviceId, templateId, startedAt };
}

export type BackupOutcome =
  | { ok: true; text: string; fingerprint: string }
  | { ok: false; failure: FailureType; message: string };

/**
 * Complete a started backup. A successful text is written to the snapshot store (durably) before the
 * transaction that points the record at it commits, so a crash leaves at worst an unreferenced file.
 */
export function finishBackup(db: DB, store: SnapshotStore, started: StartedBackup, outcome: BackupOutcome, finishedAt = Date.now()) {
  const duration = Math.max(0, finishedAt - started.startedAt);
  if (!outcome.ok) {
    db.transaction(() => {
      updateFinishedBackup(db, started.id, {
        finished_at: finishedAt,
        success: 0,
        error_message: outcome.message,
        failure_type: outcome.failure,
        duration_ms: duration,
        config_snapshot_hash: null,
        config_size: null,
        change_fingerprint: null,
        changed: 0,
      });
      setDeviceLastBackup(db, started.deviceId, started.id);
    })();
    return { id: started.id, success: false as const, changed: false, hash: null };
  }
  const snap = store.put(outcome.text);
  let changed = false;
  db.transaction(() => {
    upsertSnapshot(db, snap);
    const previous = latestSuccessfulFingerprint(db, started.deviceId, started.id);
    changed = previous !== null && previous !== outcome.fingerprint;
    updateFinishedBackup(db, started.id, {
      finished_at: finishedAt,
      success: 1,
      error_message: null,
      failure_type: null,
      duration_ms: duration,
      config_snapshot_hash: snap.hash,
      config_size: snap.size,
      change_fingerprint: outcome.fingerprint,
      changed: changed ? 1 : 0,
    });
    setDeviceLastBackup(db, started.deviceId, started.id);
  })();
  return { id: started.id, success: true as const, changed, hash: snap.hash };
}

/**
 * Read a backup's configuration text. Null when the record has no usable text: a failed backup, or a
 * snapshot that is missing or fails its hash check (logged as an integrity error, never the text).
 */
export function readBackupText(db: DB, store: SnapshotStore, log: Logger | null, row: Pick<BackupRow, 'id' | 'success' | 'config_snapshot_hash'>): string | null {
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
