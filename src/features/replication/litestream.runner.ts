// [replication] engine = "litestream" in `serve`: Litestream as a supervised child (restarted with back-off), and the snapshot files mirrored by hash beside it (docs/replication.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import { SnapshotStore } from '../../store/snapshots';
import { storedVersionHashes } from '../maintenance/maintenance.store';
import { findLitestream, LITESTREAM_CONFIG_FILE, litestreamEnv, redactSecrets, snapshotMirrorDir, writeLitestreamConfig } from './litestream-config';
import { initialStatus, REPLICATION_STATUS_FILE, writeJsonAtomic, type Replication } from './replication.service';
import { checkSftpHostKey } from './sftp-host-key';
import { mirrorSnapshots } from './snapshot-mirror';

/** The running child's pid, so that a serve killed with SIGKILL does not leave a second Litestream behind at restart. */
export const LITESTREAM_PID_FILE = 'litestream.pid';
/** In the mirror: every version committed before `consistent_at` has its snapshot file there (restore's fallback). */
export const MIRROR_MANIFEST = 'snapshots-mirror.json';
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
/** A child that ran this long is considered healthy: the next restart waits the minimum again. */
const HEALTHY_RUN_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export interface MirrorManifest {
  consistent_at: number;
  snapshot_files: number;
}

export function readMirrorManifest(mirrorDir: string): MirrorManifest | null {
  try {
    return JSON.parse(readFileSync(path.join(mirrorDir, MIRROR_MANIFEST), 'utf8')) as MirrorManifest;
  } catch {
    return null;
  }
}

/** A Litestream left running by a serve that was killed: ours when its command line names our configuration. */
function stopStrayChild(dataDir: string, configFile: string, log: Logger | null): void {
  const pidFile = path.join(dataDir, LITESTREAM_PID_FILE);
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(configFile)) return;
  } catch {
    return;
  }
  log?.warn({ pid }, 'a Litestream of an earlier serve still runs: stopping it');
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

/** Start Litestream and the snapshot mirror; `stop()` ends both after a last mirror pass and Litestream's last sync. */
export function startLitestreamReplication(
  db: DB,
  store: SnapshotStore,
  dataDir: string,
  dbFileName: string,
  config: Readonly<AppConfig>,
  log: Logger | null,
): Replication {
  const r = config.replication;
  const statusFile = path.join(dataDir, REPLICATION_STATUS_FILE);
  const configFile = path.join(dataDir, LITESTREAM_CONFIG_FILE);
  const pidFile = path.join(dataDir, LITESTREAM_PID_FILE);
  const mirrorDir = snapshotMirrorDir(r);
  const mirror = new SnapshotStore(mirrorDir);
  const status = initialStatus(dataDir, 'litestream', r.replica, r.interval_seconds);
  const save = () => {
    try {
      writeJsonAtomic(statusFile, status);
    } catch (err) {
      log?.warn({ err }, 'replication status not written');
    }
  };
  const fail = (message: string) => {
    Object.assign(status, { last_error: message, last_error_at: Date.now(), passes_failed: status.passes_failed + 1 });
    save();
  };

  let child: ChildProcess | null = null;
  let childUpSince = 0;
  let stopped = false;
  let backoff = BACKOFF_MIN_MS;
  let restartTimer: NodeJS.Timeout | null = null;
  const launch = async () => {
    restartTimer = null;
    if (stopped) return;
    let bin: string;
    try {
      bin = findLitestream(r);
      writeLitestreamConfig(configFile, dataDir, dbFileName, r);
      await checkSftpHostKey(r.replica, r.sftp_host_key);
      if (stopped) return;
    } catch (err) {
      log?.error({ err }, 'Litestream not started');
      fail((err as Error).message);
      return schedule();
    }
    const c = spawn(bin, ['replicate', '-no-expand-env', '-config', configFile], { env: litestreamEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    childUpSince = Date.now();
    let lastLine = '';
    for (const stream of [c.stdout, c.stderr]) {
      createInterface({ input: stream }).on('line', (raw) => {
        const line = redactSecrets(raw);
        lastLine = line;
        if (/error|fail|cannot/i.test(line)) log?.warn({ litestream: line }, 'litestream');
        else log?.info({ litestream: line }, 'litestream');
      });
    }
    c.on('error', (err) => log?.error({ err: redactSecrets(err.message) }, 'Litestream did not start'));
    c.on('spawn', () => {
      if (c.pid) writeFileSync(pidFile, `${c.pid}\n`, { mode: 0o600 });
      log?.info({ pid: c.pid, bin, config: configFile }, 'Litestream replicating');
    });
    c.on('exit', (code, signal) => {
      if (child === c) child = null;
      if (stopped) return;
      const ran = Date.now() - childUpSince;
      if (ran >= HEALTHY_RUN_MS) backoff = BACKOFF_MIN_MS;
      const message = `litestream exited (${signal ?? `code ${code}`}) after ${Math.round(ran / 1000)} s${lastLine ? `: ${lastLine}` : ''}`;
      log?.error({ restart_in_ms: backoff }, message);
      fail(message);
      schedule();
    });
  };
  const schedule = () => {
    if (stopped) return;
    restartTimer = setTimeout(() => void launch(), backoff);
    backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
  };

  const known = new Set<string>();
  let mirrorTimer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  /** One mirror pass: every file the database names at its start; then the mirror is consistent up to that start. */
  const mirrorPass = async () => {
    const startedAt = Date.now();
    status.last_attempt_at = startedAt;
    try {
      const hashes = storedVersionHashes(db);
      const m = await mirrorSnapshots(store, mirror, hashes, known);
      // A file gone because retention removed its version meanwhile is not damage.
      const live = m.missing.length ? new Set(storedVersionHashes(db)) : new Set<string>();
      const missing = m.missing.filter((h) => live.has(h));
      if (missing.length || m.corrupt.length) {
        throw new Error(
          `snapshot files missing (${missing.length}) or failing their hash (${m.corrupt.length}) in the data dir, e.g. ${[...missing, ...m.corrupt][0]}: run \`confvault db check\``,
        );
      }
      writeJsonAtomic(path.join(mirrorDir, MIRROR_MANIFEST), { consistent_at: startedAt, snapshot_files: known.size } satisfies MirrorManifest);
      const now = Date.now();
      // Litestream is about a sync interval behind while it runs; while it is down, the replica's time stands still.
      if (child) status.consistent_at = Math.max(status.consistent_at ?? 0, Math.min(startedAt, now - r.interval_seconds * 1000));
      Object.assign(status, {
        last_success_at: child ? now : status.last_success_at,
        last_duration_ms: now - startedAt,
        snapshots: hashes.length,
        files_copied_total: status.files_copied_total + m.copied,
        passes_ok: status.passes_ok + 1,
      });
      save();
    } catch (err) {
      log?.error({ err, mirror: mirrorDir }, 'snapshot mirror pass failed');
      fail((err as Error).message);
    }
  };
  const runMirror = () => (running ??= mirrorPass().finally(() => (running = null)));
  const tick = () => {
    if (stopped) return;
    void runMirror().then(() => {
      if (!stopped) mirrorTimer = setTimeout(tick, r.interval_seconds * 1000);
    });
  };

  stopStrayChild(dataDir, configFile, log);
  if (r.replica.startsWith('sftp://') && !r.sftp_host_key) log?.warn({ replica: r.replica }, 'sftp_host_key is empty: the SFTP server is not authenticated');
  void launch();
  tick();
  return {
    status: () => ({ ...status }),
    /** A last mirror pass, then SIGTERM: Litestream syncs its replica once more before it exits. */
    async stop() {
      stopped = true;
      if (mirrorTimer) clearTimeout(mirrorTimer);
      if (restartTimer) clearTimeout(restartTimer);
      await running;
      await runMirror();
      const c = child;
      if (c && c.exitCode === null && c.signalCode === null) {
        await new Promise<void>((resolve) => {
          const kill = setTimeout(() => c.kill('SIGKILL'), STOP_GRACE_MS);
          c.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          c.kill('SIGTERM');
        });
      }
      rmSync(pidFile, { force: true });
    },
  };
}
