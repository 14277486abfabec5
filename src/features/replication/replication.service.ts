// Replication of `serve`: every interval a consistent copy of the database (SQLite's online backup API) and the snapshot files it names go to the replica directory (docs/replication.md).
import { existsSync, mkdirSync, promises as fsp, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import { openDatabase, type DB } from '../../db/open';
import { SnapshotStore } from '../../store/snapshots';
import { fsyncDir } from '../maintenance/db-restore';
import { storedVersionHashes, useRollbackJournal } from '../maintenance/maintenance.store';
import { changeMarker } from './replication.store';
import { mirrorSnapshots } from './snapshot-mirror';

/** The replica's layout: the database copy, its manifest, and snapshots/ laid out as in a data dir. */
export const REPLICA_DB_FILE = 'confvault.db';
export const REPLICA_MANIFEST = 'replica.json';
/** In the data dir: what the last passes did, for `db replica status`, /healthz and /metrics. */
export const REPLICATION_STATUS_FILE = 'replication-status.json';
/** Pages copied per step of the backup API: the event loop runs between two steps (4 MiB at 4 KiB pages). */
/** Copies taken again in one pass when retention removed versions between a copy and its files. */
const PRUNED_RETRIES = 3;
const PAGES_PER_STEP = 1024;

export interface ReplicaManifest {
  format: 1;
  /** Epoch ms: the copy holds every change committed before this moment. */
  consistent_at: number;
  completed_at: number;
  db_bytes: number;
  snapshots: number;
  snapshot_files: number;
}

export interface ReplicationStatus {
  /** Absent in files written before the Litestream engine: builtin. */
  engine?: 'builtin' | 'litestream';
  replica: string;
  interval_seconds: number;
  /** Epoch ms: the replica holds every change committed before it (null: no copy yet). */
  consistent_at: number | null;
  last_success_at: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
  last_duration_ms: number | null;
  db_bytes: number | null;
  snapshots: number | null;
  files_copied_total: number;
  passes_ok: number;
  passes_failed: number;
}

export interface PassResult extends ReplicaManifest {
  files_copied: number;
}

export function writeJsonAtomic(file: string, value: unknown): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  renameSync(temp, file);
}

export function readReplicaManifest(replicaDir: string): ReplicaManifest | null {
  try {
    return JSON.parse(readFileSync(path.join(replicaDir, REPLICA_MANIFEST), 'utf8')) as ReplicaManifest;
  } catch {
    return null;
  }
}

export function readReplicationStatus(dataDir: string): ReplicationStatus | null {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, REPLICATION_STATUS_FILE), 'utf8')) as ReplicationStatus;
  } catch {
    return null;
  }
}

/** Seconds of committed changes the replica may lack now (0 when it is current); null before any copy. */
export function replicationLagSeconds(status: ReplicationStatus | null, now = Date.now()): number | null {
  if (!status || status.consistent_at === null) return null;
  return Math.max(0, (now - status.consistent_at) / 1000);
}

export interface ReplicationHealth {
  /** ok: the last pass succeeded; failing: the last pass failed; waiting: no copy yet. */
  status: 'ok' | 'failing' | 'waiting';
  lag_seconds: number | null;
  last_error: string | null;
}

/** What /healthz and /metrics say of replication (null when it is off), read from the status file `serve` writes. */
export function replicationHealth(dataDir: string, enabled: boolean, now = Date.now()): ReplicationHealth | null {
  if (!enabled) return null;
  const s = readReplicationStatus(dataDir);
  const lag = replicationLagSeconds(s, now);
  const failing = s !== null && s.last_error_at !== null && (s.last_success_at === null || s.last_error_at > s.last_success_at);
  const status = failing ? 'failing' : lag === null ? 'waiting' : 'ok';
  return { status, lag_seconds: lag === null ? null : Math.round(lag * 10) / 10, last_error: failing ? s.last_error : null };
}

/**
 * One pass: copy the database into <replica>/confvault.db.partial, make it a self-contained file, mirror every
 * snapshot file that copy names, and only then rename it to confvault.db. So the replica's database never names a
 * file the replica lacks, whatever was written meanwhile, and a pass cut short leaves the previous copy in place.
 */
export async function replicateOnce(
  db: DB,
  store: SnapshotStore,
  replicaDir: string,
  known = new Set<string>(),
  /** Runs between the copy and the mirroring of its files: where a test puts a concurrent prune. */
  afterCopy?: () => void,
): Promise<PassResult> {
  mkdirSync(replicaDir, { recursive: true, mode: 0o700 });
  const final = path.join(replicaDir, REPLICA_DB_FILE);
  const partial = `${final}.partial`;
  try {
    let startedAt: number;
    let hashes: string[];
    let mirrored: Awaited<ReturnType<typeof mirrorSnapshots>>;
    for (let attempt = 1; ; attempt++) {
      startedAt = Date.now();
      for (const f of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`]) rmSync(f, { force: true });
      await db.backup(partial, { progress: () => PAGES_PER_STEP });
      const copy = openDatabase(partial);
      try {
        useRollbackJournal(copy);
        hashes = storedVersionHashes(copy);
      } finally {
        copy.close();
      }
      afterCopy?.();
      mirrored = await mirrorSnapshots(store, new SnapshotStore(replicaDir), hashes, known);
      // A file missing because retention removed its version after the copy was taken is not damage: a new copy no
      // longer names it. Only a file the appliance's database still names counts as missing.
      if (!mirrored.missing.length || mirrored.corrupt.length || attempt === PRUNED_RETRIES) break;
      const live = new Set(storedVersionHashes(db));
      if (mirrored.missing.some((h) => live.has(h))) break;
    }
    if (mirrored.missing.length || mirrored.corrupt.length) {
      // The appliance's own store is damaged (`db check` says which): the replica keeps its last good copy.
      throw new Error(
        `snapshot files missing (${mirrored.missing.length}) or failing their hash (${mirrored.corrupt.length}) in the data dir, e.g. ${[...mirrored.missing, ...mirrored.corrupt][0]}: run \`confvault db check\``,
      );
    }
    await fsp.chmod(partial, 0o600);
    renameSync(partial, final);
    fsyncDir(replicaDir);
    const manifest: ReplicaManifest = {
      format: 1,
      consistent_at: startedAt,
      completed_at: Date.now(),
      db_bytes: statSync(final).size,
      snapshots: hashes.length,
      snapshot_files: known.size,
    };
    writeJsonAtomic(path.join(replicaDir, REPLICA_MANIFEST), manifest);
    return { ...manifest, files_copied: mirrored.copied };
  } finally {
    rmSync(partial, { force: true });
  }
}

export interface Replication {
  status(): ReplicationStatus | null;
  stop(): Promise<void>;
}

/** The status `serve` starts from: the history of the same replica and engine kept across restarts. */
export function initialStatus(dataDir: string, engine: 'builtin' | 'litestream', replica: string, interval: number): ReplicationStatus {
  const previous = readReplicationStatus(dataDir);
  return {
    consistent_at: null,
    last_success_at: null,
    last_attempt_at: null,
    last_error: null,
    last_error_at: null,
    last_duration_ms: null,
    db_bytes: null,
    snapshots: null,
    files_copied_total: 0,
    passes_ok: 0,
    passes_failed: 0,
    ...(previous?.replica === replica && (previous.engine ?? 'builtin') === engine ? previous : {}),
    engine,
    replica,
    interval_seconds: interval,
  };
}

/** The timer of `serve`: a pass every interval_seconds when the database changed since the last good copy. */
export function startReplication(db: DB, store: SnapshotStore, dataDir: string, config: Readonly<AppConfig>, log: Logger | null): Replication {
  const { enabled, replica, interval_seconds: interval } = config.replication;
  if (!enabled) return { status: () => null, stop: () => Promise.resolve() };
  const statusFile = path.join(dataDir, REPLICATION_STATUS_FILE);
  const status = initialStatus(dataDir, 'builtin', replica, interval);
  const known = new Set<string>();
  let copiedMarker: string | null = null;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  const save = () => {
    try {
      writeJsonAtomic(statusFile, status);
    } catch (err) {
      log?.warn({ err }, 'replication status not written');
    }
  };
  const pass = async () => {
    const checkedAt = Date.now();
    const marker = changeMarker(db);
    status.last_attempt_at = checkedAt;
    if (marker === copiedMarker) {
      // Nothing committed since the last good copy: the replica is current.
      status.consistent_at = checkedAt;
      return save();
    }
    try {
      const r = await replicateOnce(db, store, replica, known);
      copiedMarker = marker;
      Object.assign(status, {
        consistent_at: r.consistent_at,
        last_success_at: r.completed_at,
        last_duration_ms: r.completed_at - checkedAt,
        db_bytes: r.db_bytes,
        snapshots: r.snapshots,
        files_copied_total: status.files_copied_total + r.files_copied,
        passes_ok: status.passes_ok + 1,
      });
      log?.debug({ replica, files_copied: r.files_copied, db_bytes: r.db_bytes, ms: r.completed_at - checkedAt }, 'replica updated');
    } catch (err) {
      Object.assign(status, { last_error: (err as Error).message, last_error_at: Date.now(), passes_failed: status.passes_failed + 1 });
      log?.error({ err, replica }, 'replication pass failed; the replica keeps its last good copy');
    }
    save();
  };
  const runNow = () => {
    running ??= pass().finally(() => (running = null));
    return running;
  };
  // Passes start every interval (not an interval after the last one ended): the window stays interval + one pass.
  let lastStart = Date.now();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(
      () => {
        lastStart = Date.now();
        void runNow().then(schedule);
      },
      Math.max(0, lastStart + interval * 1000 - Date.now()),
    );
  };
  if (!existsSync(replica)) log?.info({ replica }, 'replica directory created at the first pass');
  void runNow().then(schedule);
  return {
    status: () => ({ ...status }),
    /** A last pass, so that a clean stop leaves the replica current (a planned switch to the standby loses nothing). */
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await runNow();
    },
  };
}
