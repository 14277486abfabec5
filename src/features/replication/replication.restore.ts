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
  if (!opts.force && holdsData(dataDir, dbFileName)) {
    throw new RestoreError(
      `${dataDir} already holds a database or snapshot files: restore a replica onto a fresh data dir, or add --force to replace that database (it is kept as ${dbFileName}.replaced-<time>)`,
    );
  }
  // Refuse at once under a running server, before any file is copied in.
  holdServeLock(dataDir).release();
  let hashes: string[];
  try {
    const db = openDatabase(replicaDb, { readonly: true });
    try {
      hashes = storedVersionHashes(db);
    } finally {
      db.close();
    }
  } catch (err) {
    throw new RestoreError(`${replicaDb} is not a readable database (${(err as Error).message}); nothing was changed`);
  }
  const mirrored = await mirrorSnapshots(new SnapshotStore(path.resolve(replicaDir)), new SnapshotStore(dataDir), hashes, new Set(), 8);
  const bad = [...mirrored.missing, ...mirrored.corrupt];
  if (bad.length) {
    throw new RestoreError(
      `the replica lacks ${mirrored.missing.length} and has ${mirrored.corrupt.length} damaged snapshot file(s) its database names (e.g. ${bad[0]}); the database was not restored`,
    );
  }
  const r = await restoreDatabase(dataDir, dbFileName, replicaDb);
  return { ...r, manifest: readReplicaManifest(replicaDir), snapshots: hashes.length, filesCopied: mirrored.copied, filesPresent: mirrored.present };
}
