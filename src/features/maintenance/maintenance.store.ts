// Queries of database maintenance: integrity checks, journal modes, the serve lock, schema version, retention and the snapshot sweep.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

/** `SELECT 1`: the database answers (/healthz). */
export function pingDatabase(db: DB): void {
  prepareCached(db, 'SELECT 1').get();
}

/** Whether the file is an SQLite database at all (throws when it is not). */
export function probeSqliteFile(db: DB): void {
  db.prepare('SELECT count(*) FROM sqlite_master').get();
}

export function integrityCheckRows(db: DB): string[] {
  return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
}

export function foreignKeyViolationRows(db: DB): unknown[] {
  return db.pragma('foreign_key_check') as unknown[];
}

/** Rollback-journal mode: a self-contained file with no -wal or -shm beside it. */
export function useRollbackJournal(db: DB): void {
  db.pragma('journal_mode = DELETE');
}

/** Fold the write-ahead log into the main file. */
export function checkpointWal(db: DB): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/** The lock file's exclusive transaction (rollback-journal mode locks the file itself). */
export function beginExclusive(db: DB): void {
  db.exec('BEGIN EXCLUSIVE');
}

export function rollback(db: DB): void {
  db.exec('ROLLBACK');
}

export function tableNameRows(db: DB): string[] {
  return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
}

/** The highest migration applied (0 for none). */
export function schemaVersionRow(db: DB): number {
  return (db.prepare('SELECT ifnull(max(version), 0) FROM schema_migrations').pluck().get() as number) ?? 0;
}

/** Delete finished backup records older than `before`, keeping each device's newest `keepMin`; returns how many went. */
export function deleteBackupsPastRetention(db: DB, keepMin: number, before: number): number {
  return db
    .prepare(
      `DELETE FROM backups WHERE id IN (
         SELECT id FROM (
           SELECT id, started_at, row_number() OVER (PARTITION BY device_id ORDER BY started_at DESC, id DESC) AS rn
             FROM backups WHERE finished_at IS NOT NULL)
          WHERE rn > ? AND started_at < ?)`,
    )
    .run(keepMin, before).changes;
}

/** Snapshot rows no backup record names. */
export function unnamedSnapshotRowHashes(db: DB): string[] {
  return db.prepare('SELECT hash FROM snapshots s WHERE NOT EXISTS (SELECT 1 FROM backups b WHERE b.config_snapshot_hash = s.hash)').pluck().all() as string[];
}

/** Whether a backup record of any state names the hash. */
export function snapshotIsNamed(db: DB, hash: string): boolean {
  return prepareCached(db, 'SELECT 1 FROM backups WHERE config_snapshot_hash = ? LIMIT 1').get(hash) !== undefined;
}

export function deleteSnapshotRow(db: DB, hash: string): void {
  prepareCached(db, 'DELETE FROM snapshots WHERE hash = ?').run(hash);
}

/** The hashes of stored versions (successful backups). */
export function storedVersionHashes(db: DB): string[] {
  return db.prepare('SELECT DISTINCT config_snapshot_hash FROM backups WHERE config_snapshot_hash IS NOT NULL AND success = 1').pluck().all() as string[];
}

export function runningBackupCount(db: DB): number {
  return db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NULL').pluck().get() as number;
}
