// `db replica litestream-config`: a litestream.yml for this data dir, for those who run Litestream beside the appliance as a sidecar (docs/replication.md; not tested here).
import path from 'node:path';
import { stringify } from 'yaml';

/**
 * Litestream (0.3.x configuration) streams the database's write-ahead log to the replicas; the snapshot files are
 * not a database and need their own copy (the comment says how). `replica` is a directory or an s3:// URL.
 */
export function litestreamConfig(dataDir: string, dbFileName: string, replica: string, intervalSeconds: number): string {
  const target = /^s3:\/\//.test(replica) ? { url: replica } : { path: path.resolve(replica || '/var/lib/confvault-replica', 'litestream') };
  const doc = { dbs: [{ path: path.join(dataDir, dbFileName), replicas: [{ ...target, 'sync-interval': `${intervalSeconds}s` }] }] };
  return [
    `# litestream.yml for the confvault data dir ${dataDir} (docs/replication.md).`,
    '# S3-compatible store: replace the replica by  url: s3://BUCKET/confvault  (with endpoint: for MinIO and the like).',
    '# Litestream copies the database only: copy the snapshot files too, missing files only, e.g. every minute',
    `#   rclone copy --immutable ${path.join(dataDir, 'snapshots')} REMOTE:BUCKET/confvault-snapshots`,
    '# and, to restore, copy them back into <data_dir>/snapshots before `litestream restore`.',
    stringify(doc).trimEnd(),
    '',
  ].join('\n');
}
