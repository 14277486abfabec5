// Records the database refused (disk full) are written as soon as it accepts writes again: a backup's failure, a job's item ends and its end.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { SnapshotStore } from '../../store/snapshots';
import { SnapshotStorageError } from '../../store/snapshots';
import { noteWriteError, noteWriteOk } from '../maintenance/storage-health';
import { finishBackup, type StartedBackup } from './backup-record.service';
import type { FailureType } from './failure-types';

/** How often a record left open is tried again. */
export const CLOSE_RETRY_MS = 2000;

/** A failure a backup is closed with. */
export interface RecordingFailure {
  failure: FailureType;
  message: string;
}

/** SQLite's "disk full" and I/O errors: the storage's fault, reported by /healthz. */
function isStorageError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code);
}

/**
 * What a backup whose recording threw failed with: a snapshot that cannot be written (disk full ...) or a database
 * that refuses the record is STORAGE_ERROR, said as such (and noted for /healthz); anything else INTERNAL.
 */
export function recordingFailure(db: DB, err: unknown): RecordingFailure {
  const f: RecordingFailure =
    err instanceof SnapshotStorageError
      ? { failure: 'STORAGE_ERROR', message: err.message }
      : isStorageError(err)
        ? { failure: 'STORAGE_ERROR', message: `The database refused to record the backup (${(err as { code: string }).code}).` }
        : { failure: 'INTERNAL', message: 'Internal error while recording the backup.' };
  if (f.failure === 'STORAGE_ERROR') noteWriteError(db, err);
  return f;
}

/**
 * Closes a started backup as `failure` now or, when the database refuses that too, as soon as it takes writes again
 * (closeWhenWritable). `onRecorded` runs in the closing transaction (finishBackup).
 */
export async function closeAsFailed(
  db: DB,
  store: SnapshotStore,
  started: StartedBackup,
  failure: RecordingFailure,
  log?: Logger | null,
  onRecorded?: () => void,
): Promise<void> {
  try {
    await finishBackup(db, store, started, { ok: false, ...failure }, Date.now(), { onRecorded });
  } catch (closeErr) {
    noteWriteError(db, closeErr);
    closeWhenWritable(db, store, started, failure, log, onRecorded);
  }
}

/**
 * Try to record the failure again every CLOSE_RETRY_MS until the database takes it: until then the record says
 * "running", and every later backup of the device would be skipped as "already running" until a restart.
 */
export function closeWhenWritable(
  db: DB,
  store: SnapshotStore,
  started: StartedBackup,
  failure: RecordingFailure,
  log?: Logger | null,
  onRecorded?: () => void,
): void {
  let trying = false;
  const timer = setInterval(() => {
    if (!db.open) return clearInterval(timer);
    if (trying) return;
    trying = true;
    finishBackup(db, store, started, { ok: false, ...failure }, Date.now(), { onRecorded }).then(
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

/**
 * Synchronous writes of several owners (a job: its items' ends, then its own end), each owner's in order: a write
 * the database refuses waits, with every later one of its owner, for flush() (the caller's beat) to get it through.
 */
export class WritesWhenWritable {
  private readonly waiting = new Map<string, { write: () => void; what: Record<string, unknown> }[]>();

  constructor(
    private readonly db: DB,
    private readonly log?: Logger | null,
  ) {}

  /** Owners with writes waiting. */
  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /** Writes now unless earlier writes of `owner` wait; true when written, false when it waits (logged once). */
  write(owner: string, write: () => void, what: Record<string, unknown>): boolean {
    const queue = this.waiting.get(owner);
    if (queue) {
      queue.push({ write, what });
      return false;
    }
    try {
      write();
      return true;
    } catch (err) {
      this.log?.warn({ err, ...what }, 'record not written (the database refused it); written again once it accepts writes');
      this.waiting.set(owner, [{ write, what }]);
      return false;
    }
  }

  /** Tries the waiting writes, each owner's in order, stopping at the first the database still refuses. */
  flush(): void {
    for (const [owner, queue] of this.waiting) {
      if (!this.db.open) return this.waiting.clear();
      while (queue.length > 0) {
        try {
          queue[0].write();
        } catch {
          break;
        }
        const done = queue.shift();
        this.log?.info(done?.what, 'record written once the database accepted writes again');
      }
      if (queue.length === 0) {
        this.waiting.delete(owner);
        noteWriteOk(this.db);
      }
    }
  }
}
