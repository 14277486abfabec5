// `db restore`: put a database copy in place of the appliance's database (server stopped, copy checked, replaced file kept aside), and the lock `serve` holds.
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations } from '../../db/migrate';
import { runtimeEnv } from '../../config/runtime-env';
import { prepareNativeAddons, sqliteNativeBinding } from '../../runtime/native';
import { openDatabase, type DB } from '../../db/open';
import { MASTER_KEY_FILE } from '../../identity/secrets';
import { openSecretBox } from '../credentials/master-key.service';
import { checkDatabase } from './maintenance.service';
import { beginExclusive, checkpointWal, probeSqliteFile, rollback, schemaVersionRow, tableNameRows, useRollbackJournal } from './maintenance.store';
import { placeSweepHold } from './sweep-hold';

/**
 * `serve` holds an exclusive SQLite write lock on <data_dir>/serve.lock for as long as it runs. The operating system
 * drops the lock when the process ends, however it ends (a crash or kill -9 leaves no stale lock to clean up).
 */
export const SERVE_LOCK_FILE = 'serve.lock';

export class ServeLockedError extends Error {}
export class RestoreError extends Error {}

export interface ServeLock {
  release(): void;
}

/** Take the lock, or throw ServeLockedError at once (no waiting) when a server holds it. */
export function holdServeLock(dataDir: string): ServeLock {
  const file = path.join(dataDir, SERVE_LOCK_FILE);
  // The first SQLite handle of `serve` and `db restore`: in the executable the addon must be in place before it.
  prepareNativeAddons(dataDir, runtimeEnv().nativeDir);
  // Not openDatabase: no WAL here (in rollback-journal mode BEGIN EXCLUSIVE locks the file itself, and leaves no
  // -wal/-shm files), and no waiting for a busy lock.
  const nativeBinding = sqliteNativeBinding();
  const db = new Database(file, { timeout: 0, ...(nativeBinding ? { nativeBinding: nativeBinding as unknown as string } : {}) });
  try {
    useRollbackJournal(db);
    beginExclusive(db);
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new ServeLockedError(`a confvault server is running on ${dataDir} (it holds ${file}): stop it first`);
    }
    throw err;
  }
  return {
    release() {
      if (!db.open) return;
      rollback(db);
      db.close();
    },
  };
}

export interface RestoreReport {
  source: string;
  dbFile: string;
  schemaVersion: number;
  knownVersion: number;
  bytes: number;
  /** Where the database that was in place went; null when there was none. */
  replaced: string | null;
}

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function hasTables(db: DB, names: string[]): boolean {
  const found = tableNameRows(db);
  return names.every((n) => found.includes(n));
}

/** Check the staged copy: whole, a confvault database, not from a newer confvault, its secrets readable with this data dir's master.key. */
function checkCopy(staged: string, dataDir: string, source: string): { schemaVersion: number; knownVersion: number } {
  const db = openDatabase(staged);
  try {
    const report = checkDatabase(db);
    if (!report.ok) throw new RestoreError(`${source} failed its integrity check (${report.lines.join('; ')}); nothing was changed`);
    if (!hasTables(db, ['schema_migrations', 'devices', 'backups', 'users']))
      throw new RestoreError(`${source} is an SQLite database but not a confvault database; nothing was changed`);
    const schemaVersion = schemaVersionRow(db);
    const knownVersion = loadMigrations().at(-1)?.version ?? 0;
    if (schemaVersion > knownVersion) {
      throw new RestoreError(
        `${source} has schema version ${schemaVersion}, newer than this confvault knows (${knownVersion}): restore it with the newer confvault; nothing was changed`,
      );
    }
    if (existsSync(path.join(dataDir, MASTER_KEY_FILE)) || schemaVersion > 0) {
      try {
        openSecretBox(db, dataDir);
      } catch (err) {
        throw new RestoreError(`${(err as Error).message} (nothing was changed)`);
      }
    }
    // A self-contained file: no -wal or -shm beside it once installed.
    useRollbackJournal(db);
    return { schemaVersion, knownVersion };
  } finally {
    db.close();
  }
}

/** Fold the write-ahead log into the main file, so that the file moved aside holds every committed change. */
function settle(dbFile: string): void {
  const db = openDatabase(dbFile);
  try {
    checkpointWal(db);
    useRollbackJournal(db);
  } finally {
    db.close();
  }
}

/**
 * Restore `source` as the database of `dataDir`. Refused while a server runs there (it holds serve.lock; this takes
 * the lock for the duration, so no server starts midway). The copy is made through SQLite's backup API into the data
 * dir (a source with its own -wal is read whole), checked there, and only then swapped in; the database it replaces
 * is renamed confvault.db.replaced-<UTC time>, and a hold (sweep-hold.ts) keeps every snapshot file until the operator
 * lifts it. A refused restore leaves the database as it was.
 */
export async function restoreDatabase(dataDir: string, dbFileName: string, source: string, now = Date.now()): Promise<RestoreReport> {
  const src = path.resolve(source);
  if (!existsSync(src) || !statSync(src).isFile()) throw new RestoreError(`${src}: no such file`);
  const lock = holdServeLock(dataDir);
  const dbFile = path.join(dataDir, dbFileName);
  const staged = `${dbFile}.restoring-${stamp(now)}`;
  try {
    let from: DB;
    try {
      from = openDatabase(src, { readonly: true });
      probeSqliteFile(from);
    } catch (err) {
      throw new RestoreError(`${src} is not an SQLite database (${(err as Error).message}); nothing was changed`);
    }
    try {
      await from.backup(staged, { progress: () => 0x7fffffff });
    } finally {
      from.close();
    }
    chmodSync(staged, 0o600);
    const versions = checkCopy(staged, dataDir, src);
    let replaced: string | null = null;
    if (existsSync(dbFile)) {
      settle(dbFile);
      replaced = `${dbFile}.replaced-${stamp(now)}`;
      renameSync(dbFile, replaced);
      for (const side of ['-wal', '-shm']) rmSync(dbFile + side, { force: true });
    }
    // Before the swap: from the moment the restored database is in place, no sweep may take the replaced one's files.
    placeSweepHold(dataDir, `${stamp(now)}: ${src} restored${replaced ? `, replacing ${path.basename(replaced)}` : ''}`);
    try {
      renameSync(staged, dbFile);
    } catch (err) {
      if (replaced) renameSync(replaced, dbFile);
      throw err;
    }
    fsyncDir(dataDir);
    return { source: src, dbFile, ...versions, bytes: statSync(dbFile).size, replaced };
  } finally {
    rmSync(staged, { force: true });
    for (const side of ['-wal', '-shm', '-journal']) rmSync(staged + side, { force: true });
    lock.release();
  }
}
