// Retention: prune backup records and audit rows older than [retention] keep_days (keeping the newest N versions per device), unreferenced snapshots; one audit row sums it up.
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import type { SnapshotStore } from '../../store/snapshots';
import { SYSTEM_ACTOR, type Actor } from '../../identity/actor';
import { pruneAudit, recordAudit } from '../audit/audit.service';

export interface PruneResult {
  records: number;
  snapshots: number;
  /** Audit rows older than keep_days. */
  audit: number;
}

/**
 * Delete records and audit rows past retention, then snapshot files no record points at; keep_days 0 keeps both
 * forever. When anything went, one audit row (written after the old ones were deleted) says what and who.
 */
export function pruneBackups(db: DB, actor: Actor, store: SnapshotStore, keepDays: number, keepMin: number, now = Date.now()): PruneResult {
  let records = 0;
  let audit = 0;
  if (keepDays > 0) {
    audit = pruneAudit(db, now - keepDays * 86_400_000);
    records = db
      .prepare(
        `DELETE FROM backups WHERE id IN (
           SELECT id FROM (
             SELECT id, started_at, row_number() OVER (PARTITION BY device_id ORDER BY started_at DESC, id DESC) AS rn
               FROM backups WHERE finished_at IS NOT NULL)
            WHERE rn > ? AND started_at < ?)`,
      )
      .run(keepMin, now - keepDays * 86_400_000).changes;
  }
  const orphans = db
    .prepare('SELECT hash FROM snapshots s WHERE NOT EXISTS (SELECT 1 FROM backups b WHERE b.config_snapshot_hash = s.hash)')
    .pluck()
    .all() as string[];
  const del = db.prepare('DELETE FROM snapshots WHERE hash = ?');
  for (const hash of orphans) {
    // Row first: a crash between the two leaves a file that `db check` reports and the next prune removes.
    del.run(hash);
    store.remove(hash);
  }
  const fileOrphans = findOrphanFiles(db, store);
  for (const h of fileOrphans.unreferenced) store.remove(h);
  const result = { records, snapshots: orphans.length + fileOrphans.unreferenced.length, audit };
  if (result.records || result.snapshots || result.audit) {
    db.transaction(() => {
      recordAudit(db, actor, { action: 'retention.prune', target: 'backups', details: { ...result, keep_days: keepDays, keep_min_versions: keepMin } }, now);
    }).immediate();
  }
  return result;
}

export function findOrphanFiles(db: DB, store: SnapshotStore): { unreferenced: string[]; temporary: string[] } {
  const { hashes, temporary } = store.scan();
  const known = db.prepare('SELECT 1 FROM backups WHERE config_snapshot_hash = ? LIMIT 1');
  return { unreferenced: hashes.filter((h) => !known.get(h)), temporary };
}

/** In `serve`: prune at start and once a day. */
export function startRetention(db: DB, store: SnapshotStore, config: Readonly<AppConfig>, log: Logger): NodeJS.Timeout {
  const run = () => {
    try {
      const r = pruneBackups(db, SYSTEM_ACTOR, store, config.retention.keep_days, config.retention.keep_min_versions);
      if (r.records || r.snapshots || r.audit) log.info(r, 'retention pruned backups and audit rows');
    } catch (err) {
      log.error({ err }, 'retention failed');
    }
  };
  setImmediate(run);
  const timer = setInterval(run, 86_400_000);
  timer.unref();
  return timer;
}
