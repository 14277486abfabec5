// Litestream for [replication] engine = "litestream": where its executable is, the litestream.yml for the replica type, and the environment it runs with (docs/replication.md).
import { accessSync, constants, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { AppConfig } from '../../config/config';
import { isExecutable, repoRoot } from '../../runtime/assets';

type ReplicationConfig = AppConfig['replication'];

/** The bundled package (development and tests; an installation puts the binary next to dist/confvault instead). */
const PACKAGE_BINARY = 'node_modules/@flydotio/litestream-linux-x64/litestream';
/** The generated configuration in the data dir (no secret in it: S3 keys travel in the child's environment). */
export const LITESTREAM_CONFIG_FILE = 'litestream.yml';
/** Litestream writes the database under <replica>/litestream; the snapshot files go to <replica>/snapshots. */
const FILE_REPLICA_SUBDIR = 'litestream';
/** Variables passed from serve's environment to Litestream (credentials of S3-compatible stores); never logged. */
export const LITESTREAM_SECRET_ENV = [
  'LITESTREAM_ACCESS_KEY_ID',
  'LITESTREAM_SECRET_ACCESS_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Litestream executable: litestream_path, next to the confvault executable, the bundled package, then PATH. */
export function findLitestream(r: Pick<ReplicationConfig, 'litestream_path'>, env: NodeJS.ProcessEnv = process.env): string {
  if (r.litestream_path) {
    if (executable(r.litestream_path)) return r.litestream_path;
    throw new Error(`replication.litestream_path: ${r.litestream_path} is not an executable file`);
  }
  const candidates: string[] = [];
  if (isExecutable()) candidates.push(path.join(path.dirname(process.execPath), 'litestream'));
  else {
    try {
      candidates.push(path.join(repoRoot(), PACKAGE_BINARY));
    } catch {
      /* not in the repository */
    }
  }
  for (const dir of (env.PATH ?? '').split(':')) if (dir) candidates.push(path.join(dir, 'litestream'));
  const found = candidates.find(executable);
  if (found) return found;
  throw new Error('Litestream not found: put the litestream executable next to confvault, on PATH, or name it in replication.litestream_path');
}

/** Where the snapshot files are mirrored by hash (a SnapshotStore data dir: files under <it>/snapshots). */
export function snapshotMirrorDir(r: Pick<ReplicationConfig, 'replica' | 'snapshot_mirror'>): string {
  return r.snapshot_mirror || r.replica;
}

/** Litestream's replica entry for `replica`: a directory, sftp://USER@HOST[:PORT]/PATH or s3://BUCKET/PATH. */
function replicaEntry(r: ReplicationConfig): Record<string, unknown> {
  const sync = { 'sync-interval': `${r.interval_seconds}s` };
  if (r.replica.startsWith('sftp://')) {
    const u = new URL(r.replica);
    if (u.password) throw new Error('replication.replica: no password in the sftp:// URL (use sftp_key_file)');
    return {
      type: 'sftp',
      host: `${u.hostname}:${u.port || 22}`,
      user: decodeURIComponent(u.username),
      path: decodeURIComponent(u.pathname),
      ...(r.sftp_key_file ? { 'key-path': r.sftp_key_file } : {}),
      ...sync,
    };
  }
  if (r.replica.startsWith('s3://')) {
    const u = new URL(r.replica);
    if (u.username || u.password)
      throw new Error(
        'replication.replica: no keys in the s3:// URL (serve passes LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY from its environment)',
      );
    return {
      type: 's3',
      bucket: u.hostname,
      path: u.pathname.replace(/^\/+/, '') || 'confvault',
      ...(r.s3_region ? { region: r.s3_region } : {}),
      ...(r.s3_endpoint ? { endpoint: r.s3_endpoint, 'force-path-style': true } : {}),
      ...sync,
    };
  }
  return { type: 'file', path: path.resolve(r.replica || '/var/lib/confvault-replica', FILE_REPLICA_SUBDIR), ...sync };
}

/** A litestream.yml (Litestream 0.3.x) for the database of `dataDir` and the configured replica. */
export function litestreamConfig(dataDir: string, dbFileName: string, r: ReplicationConfig): string {
  const doc = { dbs: [{ path: path.join(dataDir, dbFileName), replicas: [replicaEntry(r)] }] };
  return [
    `# litestream.yml for the confvault data dir ${dataDir}, generated from [replication] (docs/replication.md).`,
    `# Litestream copies the database only; confvault mirrors the snapshot files to ${snapshotMirrorDir(r) || '<replica>'}/snapshots.`,
    stringify(doc).trimEnd(),
    '',
  ].join('\n');
}

/** Write the configuration to `file` (mode 600). */
export function writeLitestreamConfig(file: string, dataDir: string, dbFileName: string, r: ReplicationConfig): void {
  writeFileSync(file, litestreamConfig(dataDir, dbFileName, r), { mode: 0o600 });
}

/** The child's environment: a minimal one, plus the S3 credentials serve was given (never on a command line). */
export function litestreamEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { PATH: env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? '/' };
  for (const k of LITESTREAM_SECRET_ENV) if (env[k]) out[k] = env[k];
  return out;
}

/** Replace every credential value of `env` in a line of Litestream's output, before it reaches our log. */
export function redactSecrets(line: string, env: NodeJS.ProcessEnv = process.env): string {
  let s = line;
  for (const k of LITESTREAM_SECRET_ENV) {
    const v = env[k];
    if (v && v.length >= 4) s = s.split(v).join('[redacted]');
  }
  return s;
}
