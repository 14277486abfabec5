// A backup whose failure could not be recorded (the database refused the write: disk full) is closed as soon as the database accepts writes again.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { SnapshotStore } from '../../store/snapshots';
import { noteWriteOk } from '../maintenance/storage-health';
import { finishBackup, type StartedBackup } from './backups.service';
import type { FailureType } from './failure-types';

/** How often a record left open is tried again. */
export const CLOSE_RETRY_MS = 2000;

/**
 * Try to record the failure again every CLOSE_RETRY_MS until the database takes it: until then the record says
 * "running", and every later backup of the device would be skipped as "already running" until a restart.
 */
export function closeWhenWritable(
  db: DB,
  store: SnapshotStore,
  started: StartedBackup,
  failure: { failure: FailureType; message: string },
  log?: Logger | null,
): void {
  let trying = false;
  const timer = setInterval(() => {
    if (!db.open) return clearInterval(timer);
    if (trying) return;
    trying = true;
    finishBackup(db, store, started, { ok: false, ...failure }).then(
      () => {
        clearInterval(timer);
        noteWriteOk(db);
        log?.info({ backup_id: started.id, device_id: started.deviceId }, 'backup record closed once the database accepted writes again');
      },
      () => (trying = false),
    );
  }, CLOSE_RETRY_MS);
  timer.unref();
}
