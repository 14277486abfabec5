// `db restore --from-replica`: the snapshot files the replica's database names, verified, then that database through `db restore` (checks, lock, swap).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../db/open';
import { SnapshotStore } from '../../store/snapshots';
import { holdServeLock, restoreDatabase, RestoreError, type RestoreReport } from '../maintenance/db-restore';
import { storedVersionHashes } from '../maintenance/maintenance.store';
import { readReplicaManifest, REPLICA_DB_FILE, type ReplicaManifest } from './replication.service';
import { mirrorSnapshots } from './snapshot-mirror';

export interface ReplicaRestoreReport extends RestoreReport {
  manifest: ReplicaManifest | null;
  snapshots: number;
  filesCopied: number;
  filesPresent: number;
}

function holdsData(dataDir: string, dbFileName: string): boolean {
  if (existsSync(path.join(dataDir, dbFileName))) return true;
  try {
    return readdirSync(path.join(dataDir, 'snapshots')).length > 0;
  } catch {
    return false;
  }
}

/** Refuse a data dir that holds data (unless `force`) or a running server, before anything is copied in. */
export function checkRestoreTarget(dataDir: string, dbFileName: string, force: boolean | undefined, what: string): void {
  if (!force && holdsData(dataDir, dbFileName)) {
    throw new RestoreError(
      `${dataDir} already holds a database or snapshot files: restore ${what} onto a fresh data dir, or add --force to replace that database (it is kept as ${dbFileName}.replaced-<time>)`,
    );
  }
  holdServeLock(dataDir).release();
}

/** The snapshot hashes a database names, or a RestoreError saying it is not a readable database. */
export function namedHashes(dbFile: string): string[] {
  try {
    const db = openDatabase(dbFile, { readonly: true });
    try {
      return storedVersionHashes(db);
    } finally {
      db.close();
    }
  } catch (err) {
    throw new RestoreError(`${dbFile} is not a readable database (${(err as Error).message}); nothing was changed`);
  }
}

/**
 * The snapshot files `hashes` name, from `files` into the data dir (each verified against its hash), then the database
 * `dbFile` through `db restore`'s path (checks, lock, sweep hold, swap). A file missing or damaged in `files` stops it
 * before the database is touched.
 */
export async function restoreWithSnapshotFiles(dataDir: string, dbFileName: string, dbFile: string, hashes: string[], files: SnapshotStore) {
  const mirrored = await mirrorSnapshots(files, new SnapshotStore(dataDir), hashes, new Set(), 8);
  const bad = [...mirrored.missing, ...mirrored.corrupt];
  if (bad.length) {
    throw new RestoreError(
      `the replica lacks ${mirrored.missing.length} and has ${mirrored.corrupt.length} damaged snapshot file(s) its database names (e.g. ${bad[0]}); the database was not restored`,
    );
  }
  const r = await restoreDatabase(dataDir, dbFileName, dbFile);
  return { ...r, snapshots: hashes.length, filesCopied: mirrored.copied, filesPresent: mirrored.present };
}

/**
 * Restore the appliance in `dataDir` from a replica directory. Onto a fresh data dir (no database, no snapshot file)
 * unless `force`; then the database in place is kept aside exactly as `db restore` keeps it. Files first, verified
 * against their hashes, so the database never lands without them; a replica lacking a file its database names is
 * refused before the database is touched.
 */
export async function restoreFromReplica(
  dataDir: string,
  dbFileName: string,
  replicaDir: string,
  opts: { force?: boolean } = {},
): Promise<ReplicaRestoreReport> {
  const replicaDb = path.join(path.resolve(replicaDir), REPLICA_DB_FILE);
  if (!existsSync(replicaDb)) throw new RestoreError(`${replicaDb}: no such file (not a confvault replica, or no pass has finished yet)`);
  checkRestoreTarget(dataDir, dbFileName, opts.force, 'a replica');
  const hashes = namedHashes(replicaDb);
  const r = await restoreWithSnapshotFiles(dataDir, dbFileName, replicaDb, hashes, new SnapshotStore(path.resolve(replicaDir)));
  return { ...r, manifest: readReplicaManifest(replicaDir) };
}
