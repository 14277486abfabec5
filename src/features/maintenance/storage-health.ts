// Storage health for /healthz and /metrics: free space of the data dir, and the last write the database or the snapshot store refused.
import { statfsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { DB } from '../../db/open';

interface WriteState {
  error: { at: number; code: string; message: string } | null;
  okAt: number;
}

// One state per open database (tests run several appliances in one process).
const byDb = new WeakMap<DB, WriteState>();

function stateOf(db: DB): WriteState {
  let s = byDb.get(db);
  if (!s) byDb.set(db, (s = { error: null, okAt: 0 }));
  return s;
}

/** A write failed for the storage's sake (disk full, read-only ...): /healthz reports it until a later write succeeds. */
export function noteWriteError(db: DB, err: unknown, at = Date.now()): void {
  const e = err as { code?: string; message?: string };
  stateOf(db).error = { at, code: String(e.code ?? 'ERROR'), message: String(e.message ?? err).slice(0, 300) };
}

/** A write went through: an earlier write error is over. */
export function noteWriteOk(db: DB, at = Date.now()): void {
  const s = stateOf(db);
  s.okAt = at;
  if (s.error && s.error.at <= at) s.error = null;
}

/**
 * A bookkeeping write (last-used times, session touches, heartbeats): it must never fail the request or the read it
 * accompanies. A failure is remembered for /healthz and logged.
 */
export function bestEffortWrite(db: DB, what: string, write: () => void, log?: Logger | null): void {
  try {
    write();
  } catch (err) {
    noteWriteError(db, err);
    log?.warn({ err, what }, 'bookkeeping write failed (the request goes on)');
  }
}

/** Free bytes of the file system holding `dir`, or null when it cannot be asked. */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}

export interface StorageProblem {
  code: 'LOW_DISK_SPACE' | 'WRITE_FAILED';
  message: string;
}

export interface StorageHealth {
  ok: boolean;
  free_bytes: number | null;
  problems: StorageProblem[];
}

/** What /healthz says about storage: free space under [storage] min_free_mb, or a write refused since the last good one. */
export function storageHealth(db: DB, dataDir: string, minFreeMb: number): StorageHealth {
  const free = freeBytes(dataDir);
  const problems: StorageProblem[] = [];
  if (free !== null && minFreeMb > 0 && free < minFreeMb * 1024 * 1024) {
    problems.push({ code: 'LOW_DISK_SPACE', message: `${free} bytes free in ${dataDir}, under [storage] min_free_mb = ${minFreeMb}` });
  }
  const error = stateOf(db).error;
  if (error) problems.push({ code: 'WRITE_FAILED', message: `${new Date(error.at).toISOString()}: ${error.code}: ${error.message}` });
  return { ok: problems.length === 0, free_bytes: free, problems };
}
