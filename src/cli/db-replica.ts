// `confvault db replica ...` and `db restore --from-replica`: the replica's state, a Litestream sidecar configuration, and the restore from a replica.
import type { AppConfig } from '../config/config';
import { DB_FILE_NAME, ensureDataDir } from '../app/bootstrap';
import { litestreamConfig, snapshotMirrorDir } from '../features/replication/litestream-config';
import { readMirrorManifest } from '../features/replication/litestream.runner';
import { restoreFromLitestream } from '../features/replication/litestream.restore';
import { restoreFromReplica } from '../features/replication/replication.restore';
import { readReplicaManifest, readReplicationStatus, replicationHealth, replicationLagSeconds } from '../features/replication/replication.service';
import { UsageError, err, fmtTime, out } from './common';

export const DB_REPLICA_HELP = `  confvault db restore --from-replica [PATH] [--force]
                               restore from a replica directory (default: [replication] replica) onto a
                               fresh data dir: the snapshot files its database names, each checked against
                               its hash, then the database as \`db restore\` puts it in place; --force
                               restores over a data dir that holds a database (kept as .replaced-<time>).
                               With engine = "litestream": \`litestream restore\` of the replica (PATH: a
                               directory, sftp:// or s3:// URL), the snapshot files from snapshot_mirror
  confvault db replica status  the replica, the last good copy, the lag (seconds of changes it may lack), the
                               last error; exits 1 when replication is on and its last pass failed
  confvault db replica litestream-config
                               the litestream.yml serve generates for engine = "litestream" (also usable
                               to run Litestream as a sidecar; docs/replication.md)`;

export async function restoreReplicaCommand(config: Readonly<AppConfig>, from: string | undefined, force: boolean): Promise<number> {
  const replica = from ?? config.replication.replica;
  if (!replica) throw new UsageError('db restore --from-replica: give PATH or set [replication] replica');
  const dataDir = config.storage.data_dir;
  ensureDataDir(dataDir);
  if (config.replication.engine === 'litestream') {
    const r = await restoreFromLitestream(dataDir, DB_FILE_NAME, { ...config.replication, replica }, { force });
    printRestore(r);
    out(
      r.pointInTime === null
        ? 'the latest state Litestream replicated'
        : `the state at ${new Date(r.pointInTime).toISOString()}: the latest one named snapshot files the mirror did not hold yet`,
    );
    return restored(r);
  }
  const r = await restoreFromReplica(dataDir, DB_FILE_NAME, replica, { force });
  printRestore(r);
  if (r.manifest) out(`the replica holds every change committed before ${new Date(r.manifest.consistent_at).toISOString()}`);
  return restored(r);
}

function printRestore(r: { filesCopied: number; filesPresent: number; source: string; schemaVersion: number; bytes: number; dbFile: string }): void {
  out(`snapshot files copied ${r.filesCopied}, already present ${r.filesPresent}, each matching its hash`);
  out(`restored ${r.source} (schema version ${r.schemaVersion}, ${r.bytes} bytes) to ${r.dbFile}`);
}

function restored(r: { replaced: string | null; schemaVersion: number; knownVersion: number }): number {
  out(r.replaced ? `the database it replaced is kept as ${r.replaced}` : 'there was no database in place before');
  if (r.schemaVersion < r.knownVersion) out(`the next start migrates it from schema version ${r.schemaVersion} to ${r.knownVersion}`);
  err('next: `confvault db check`, then start `serve`');
  return 0;
}

export function replicaCommand(config: Readonly<AppConfig>, action: string | undefined): number {
  const { enabled, replica, interval_seconds, engine } = config.replication;
  if (action === 'litestream-config') {
    out(litestreamConfig(config.storage.data_dir, DB_FILE_NAME, config.replication).trimEnd());
    return 0;
  }
  if (action !== 'status') throw new UsageError(action ? `db replica: unknown action "${action}"` : 'db replica: give status or litestream-config');
  const tz = config.server.timezone;
  const s = readReplicationStatus(config.storage.data_dir);
  const lag = replicationLagSeconds(s);
  out(`enabled\t${enabled}`);
  out(`engine\t${engine}`);
  out(`replica\t${replica || '-'}`);
  out(`interval_seconds\t${interval_seconds}`);
  out(`last_success\t${fmtTime(s?.last_success_at ?? null, tz)}`);
  out(`consistent_at\t${fmtTime(s?.consistent_at ?? null, tz)}`);
  out(`lag_seconds\t${lag === null ? '-' : lag.toFixed(1)}`);
  out(`last_error\t${s?.last_error ?? '-'}`);
  out(`last_error_at\t${fmtTime(s?.last_error_at ?? null, tz)}`);
  out(`passes_ok\t${s?.passes_ok ?? 0}`);
  out(`passes_failed\t${s?.passes_failed ?? 0}`);
  if (engine === 'litestream') {
    const mm = readMirrorManifest(snapshotMirrorDir(config.replication));
    out(`snapshot_mirror\t${mm ? `${mm.snapshot_files} files, every version before ${fmtTime(mm.consistent_at, tz)}` : '-'}`);
  } else {
    const m = replica ? readReplicaManifest(replica) : null;
    out(`replica_copy\t${m ? `${m.db_bytes} bytes, ${m.snapshots} snapshot files named, consistent at ${fmtTime(m.consistent_at, tz)}` : '-'}`);
  }
  const failing = replicationHealth(config.storage.data_dir, enabled)?.status === 'failing';
  if (failing) err('the last replication pass failed: see last_error');
  return failing ? 1 : 0;
}
