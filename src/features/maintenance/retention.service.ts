// Retention: prune backup records and audit rows older than [retention] keep_days (keeping the newest N versions per device), then sweep unreferenced snapshots (docs/snapshot-lifecycle.md); one audit row sums it up.
import path from 'node:path';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import type { SnapshotStore } from '../../store/snapshots';
import { SYSTEM_ACTOR, type Actor } from '../../identity/actor';
import { pruneAudit, recordAudit } from '../audit/audit.service';
import { liftSweepHold, readSweepHold } from './sweep-hold';
import { deleteBackupsPastRetention, deleteSnapshotRow, snapshotIsNamed, unnamedSnapshotRowHashes } from './maintenance.store';

export interface PruneResult {
  records: number;
  /** Snapshot files removed. */
  snapshots: number;
  /** Audit rows older than keep_days. */
  audit: number;
  /** Unreferenced snapshot files kept: younger than the grace period, or every one while a restore hold is in place. */
  kept: number;
  /** Why no file was swept at all, when none was: a restore hold, or a run that does not sweep. */
  held: string | null;
}

export interface PrunePolicy {
  keepDays: number;
  keepMin: number;
  /** Only files untouched this long are swept ([retention] orphan_grace_hours). */
  graceHours: number;
  /** false: records, audit rows and snapshot rows only, no file removed (the run at `serve` start). */
  sweepFiles: boolean;
  /** The operator's `db prune --orphans`: lift a restore's hold first. */
  liftHold?: boolean;
}

/** Hashes re-checked and swept per write transaction: the lock is held for a bounded time, writers get in between. */
const SWEEP_BATCH = 200;

export function retentionPolicy(config: Readonly<AppConfig>, sweepFiles: boolean): PrunePolicy {
  const r = config.retention;
  return { keepDays: r.keep_days, keepMin: r.keep_min_versions, graceHours: r.orphan_grace_hours, sweepFiles };
}

/**
 * Delete records and audit rows past retention (keep_days 0 keeps both forever), then the snapshots no record names.
 * A file goes only when, under the database's write lock, no record of any state names its hash (a running backup
 * names it before writing or reusing the file) and it is untouched for the grace period; no file goes while a
 * restore's hold is in place. When anything went, one audit row (written after the old ones went) says what and who.
 */
export function pruneBackups(db: DB, actor: Actor, store: SnapshotStore, dataDir: string, policy: PrunePolicy, now = Date.now()): PruneResult {
  let records = 0;
  let audit = 0;
  const { keepDays, keepMin } = policy;
  if (keepDays > 0) {
    audit = pruneAudit(db, now - keepDays * 86_400_000);
    records = deleteBackupsPastRetention(db, keepMin, now - keepDays * 86_400_000);
  }
  if (policy.liftHold) liftSweepHold(dataDir);
  const hold = readSweepHold(dataDir);
  const held = !policy.sweepFiles ? 'this run does not sweep files' : hold;
  const sweep = sweepOrphans(db, store, held === null ? now - policy.graceHours * 3_600_000 : null);
  const result = { records, snapshots: sweep.removed, audit, kept: sweep.kept, held };
  if (result.records || result.snapshots || result.audit) {
    db.transaction(() => {
      recordAudit(db, actor, { action: 'retention.prune', target: 'backups', details: { ...result, keep_days: keepDays, keep_min_versions: keepMin } }, now);
    }).immediate();
  }
  return result;
}

/**
 * Unreferenced snapshot rows and files: each candidate is re-checked inside a write transaction, so a backup that
 * named the hash in between (any process) keeps it. Rows of unreferenced hashes go; files go when untouched since
 * `before` (null: no file goes). Leftover temporary files older than `before` go too.
 */
function sweepOrphans(db: DB, store: SnapshotStore, before: number | null): { removed: number; kept: number } {
  const rows = unnamedSnapshotRowHashes(db);
  const files = findOrphanFiles(db, store);
  const candidates = [...new Set([...rows, ...files.unreferenced])];
  let removed = 0;
  let kept = 0;
  for (let i = 0; i < candidates.length; i += SWEEP_BATCH) {
    db.transaction(() => {
      for (const hash of candidates.slice(i, i + SWEEP_BATCH)) {
        if (snapshotIsNamed(db, hash)) continue;
        deleteSnapshotRow(db, hash);
        if (before !== null && store.removeIfUntouchedSince(hash, before)) removed++;
        else if (store.locate(hash)) kept++;
      }
    }).immediate();
  }
  if (before === null || files.temporary.length === 0) return { removed, kept };
  // A temporary file is named after the hash its writer reserved first: while that record names it, it is being written.
  db.transaction(() => {
    for (const tmp of files.temporary) if (!snapshotIsNamed(db, temporaryHash(tmp))) store.removeTemporaryOlderThan(tmp, before);
  }).immediate();
  return { removed, kept };
}

/** The hash in a temporary file's name (.<hash>.<pid>.<time>.<n>.tmp, store/snapshots.ts). */
function temporaryHash(file: string): string {
  return path.basename(file).split('.')[1] ?? '';
}

export function findOrphanFiles(db: DB, store: SnapshotStore): { unreferenced: string[]; temporary: string[] } {
  const { hashes, temporary } = store.scan();
  return { unreferenced: hashes.filter((h) => !snapshotIsNamed(db, h)), temporary };
}

/**
 * In `serve`: records and audit rows at start (no file is swept then: a restored or copied-in database may not name
 * files another one still needs), then the full prune once a day.
 */
export function startRetention(db: DB, store: SnapshotStore, dataDir: string, config: Readonly<AppConfig>, log: Logger): NodeJS.Timeout {
  const run = (sweepFiles: boolean) => {
    try {
      const r = pruneBackups(db, SYSTEM_ACTOR, store, dataDir, retentionPolicy(config, sweepFiles));
      if (r.records || r.snapshots || r.audit) log.info(r, 'retention pruned backups and audit rows');
      if (sweepFiles && r.held)
        log.warn({ hold: r.held, kept: r.kept }, 'orphan snapshot files kept: a restore hold is in place (lift it with `confvault db prune --orphans`)');
    } catch (err) {
      log.error({ err }, 'retention failed');
    }
  };
  setImmediate(() => run(false));
  const timer = setInterval(() => run(true), 86_400_000);
  timer.unref();
  return timer;
}
