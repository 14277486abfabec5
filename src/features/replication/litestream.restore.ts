// `db restore --from-replica` with engine = "litestream": `litestream restore` into a temporary file, the snapshot files from the mirror, then the database through `db restore`'s path.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AppConfig } from '../../config/config';
import { SnapshotStore } from '../../store/snapshots';
import { RestoreError, type RestoreReport } from '../maintenance/db-restore';
import { findLitestream, litestreamEnv, redactSecrets, snapshotMirrorDir, writeLitestreamConfig } from './litestream-config';
import { MIRROR_MANIFEST, readMirrorManifest } from './litestream.runner';
import { checkSftpHostKey } from './sftp-host-key';
import { checkRestoreTarget, namedHashes, restoreWithSnapshotFiles } from './replication.restore';

export interface LitestreamRestoreReport extends RestoreReport {
  snapshots: number;
  filesCopied: number;
  filesPresent: number;
  /** Epoch ms when the latest state named files the mirror lacked and the restore went back to the mirror's time. */
  pointInTime: number | null;
}

function runLitestream(bin: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(bin, args, { env: litestreamEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    c.stdout.on('data', (d) => (output += d));
    c.stderr.on('data', (d) => (output += d));
    c.on('error', (err) => reject(new RestoreError(`litestream did not start: ${err.message}`)));
    c.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(new RestoreError(`litestream restore failed (${signal ?? `code ${code}`}): ${redactSecrets(output.trim()).slice(-2000)}; nothing was changed`));
    });
  });
}

/**
 * `litestream restore` of the replica into `work`: the latest state; when it names a snapshot file the mirror does
 * not hold yet (versions written in the last seconds before a crash), the state at the mirror's `consistent_at`
 * instead, so the result never names a file the mirror lacks.
 */
export async function restoreLitestreamState(dataDir: string, dbFileName: string, r: Readonly<AppConfig['replication']>, work: string) {
  const bin = findLitestream(r);
  try {
    await checkSftpHostKey(r.replica, r.sftp_host_key);
  } catch (err) {
    throw new RestoreError(`${(err as Error).message}; nothing was changed`);
  }
  const mirrorDir = snapshotMirrorDir(r);
  const files = new SnapshotStore(mirrorDir);
  const configFile = path.join(work, 'litestream.yml');
  writeLitestreamConfig(configFile, dataDir, dbFileName, r);
  const restore = async (name: string, at?: number) => {
    const out = path.join(work, name);
    const when = at === undefined ? [] : ['-timestamp', new Date(at).toISOString()];
    await runLitestream(bin, ['restore', '-no-expand-env', '-config', configFile, '-o', out, ...when, path.join(dataDir, dbFileName)]);
    return { out, hashes: namedHashes(out) };
  };
  let state = await restore('latest.db');
  let pointInTime: number | null = null;
  if (state.hashes.some((h) => !files.locate(h))) {
    const m = readMirrorManifest(mirrorDir);
    if (!m)
      throw new RestoreError(`${mirrorDir}: the snapshot mirror lacks files the replica's database names and has no ${MIRROR_MANIFEST}; nothing was changed`);
    pointInTime = m.consistent_at;
    state = await restore('at-mirror.db', pointInTime);
  }
  return { ...state, files, pointInTime };
}

/** Restore the appliance in `dataDir` from the Litestream replica of [replication] (onto a fresh data dir unless `force`). */
export async function restoreFromLitestream(
  dataDir: string,
  dbFileName: string,
  r: Readonly<AppConfig['replication']>,
  opts: { force?: boolean } = {},
): Promise<LitestreamRestoreReport> {
  checkRestoreTarget(dataDir, dbFileName, opts.force, 'a Litestream replica');
  findLitestream(r);
  const work = mkdtempSync(path.join(dataDir, '.litestream-restore-'));
  try {
    const state = await restoreLitestreamState(dataDir, dbFileName, r, work);
    const report = await restoreWithSnapshotFiles(dataDir, dbFileName, state.out, state.hashes, state.files);
    return { ...report, pointInTime: state.pointInTime };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
