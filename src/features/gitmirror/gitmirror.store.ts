// The git mirror's tables (schema/0024): the queue of versions to commit, the commit of each backup, each remote's state.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

/** A stored version as the mirror commits it: where it goes, when, by whom, from which trigger and job. */
export interface MirrorVersionRow {
  seq: number | null;
  backup_id: string;
  started_at: number | null;
  trigger: string | null;
  changed_by: string | null;
  config_snapshot_hash: string | null;
  device_name: string | null;
  group_id: number | null;
  job_id: string | null;
}

export interface RemoteRow {
  url: string;
  pushed_commit: string | null;
  pushed_at: number | null;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  rejected: number;
  rejected_total: number;
  failures_total: number;
}

const VERSION_COLUMNS = `b.id AS backup_id, b.started_at, b.trigger, b.changed_by, b.config_snapshot_hash,
  d.name AS device_name, d.group_id,
  (SELECT i.job_id FROM backup_job_items i WHERE i.backup_id = b.id LIMIT 1) AS job_id`;

/** Turns queueing on or off (the backup path queues only while the mirror is enabled). */
export function setMirrorEnabled(db: DB, enabled: boolean, maxQueue: number): void {
  db.prepare(
    'INSERT INTO git_mirror_state (id, enabled, max_queue) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, max_queue = excluded.max_queue',
  ).run(enabled ? 1 : 0, maxQueue);
}

/** Queue one stored version; a full queue counts it as overflowed instead. Runs inside the backup's transaction. */
export function insertPending(db: DB, backupId: string, at: number): void {
  const state = prepareCached(db, 'SELECT max_queue FROM git_mirror_state WHERE id = 1 AND enabled = 1').get() as { max_queue: number } | undefined;
  if (!state) return;
  const queued = prepareCached(db, 'SELECT count(*) FROM git_mirror_pending').pluck().get() as number;
  if (queued >= state.max_queue) {
    prepareCached(db, 'UPDATE git_mirror_state SET overflowed = overflowed + 1 WHERE id = 1').run();
    return;
  }
  prepareCached(db, 'INSERT INTO git_mirror_pending (backup_id, queued_at) VALUES (?, ?) ON CONFLICT (backup_id) DO NOTHING').run(backupId, at);
}

/** The oldest queued versions, in the order they were stored (a version whose record is gone has null fields). */
export function listPending(db: DB, limit: number): MirrorVersionRow[] {
  return db
    .prepare(
      `SELECT p.seq, p.backup_id AS queued_id, ${VERSION_COLUMNS}
         FROM git_mirror_pending p LEFT JOIN backups b ON b.id = p.backup_id LEFT JOIN devices d ON d.id = b.device_id
        ORDER BY p.seq LIMIT ?`,
    )
    .all(limit)
    .map((r) => {
      const row = r as MirrorVersionRow & { queued_id: string };
      return { ...row, backup_id: row.queued_id };
    });
}

/** Stored versions never committed, oldest first (the backfill). */
export function listUncommitted(db: DB, limit: number): MirrorVersionRow[] {
  return db
    .prepare(
      `SELECT NULL AS seq, ${VERSION_COLUMNS}
         FROM backups b JOIN devices d ON d.id = b.device_id
        WHERE b.success = 1 AND b.config_snapshot_hash IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM git_mirror_commits c WHERE c.backup_id = b.id)
        ORDER BY b.started_at, b.id LIMIT ?`,
    )
    .all(limit) as MirrorVersionRow[];
}

/** A group's path from the top, its names joined with '/' (empty for no group). */
export function groupPath(db: DB, groupId: number | null): string[] {
  if (groupId === null) return [];
  const names = prepareCached(
    db,
    `WITH RECURSIVE up(id, parent_id, name, depth) AS (
       SELECT id, parent_id, name, 0 FROM device_groups WHERE id = ?
       UNION ALL SELECT g.id, g.parent_id, g.name, up.depth + 1 FROM device_groups g JOIN up ON g.id = up.parent_id WHERE up.depth < 64)
     SELECT name FROM up ORDER BY depth DESC`,
  )
    .pluck()
    .all(groupId) as string[];
  return names;
}

export function commitOf(db: DB, backupId: string): string | null {
  return (prepareCached(db, 'SELECT commit_id FROM git_mirror_commits WHERE backup_id = ?').pluck().get(backupId) as string | undefined) ?? null;
}

/** Records a version's commit and takes it off the queue, in one transaction. */
export function recordCommit(db: DB, backupId: string, commitId: string, path: string, at: number): void {
  db.transaction(() => {
    db.prepare('INSERT INTO git_mirror_commits (backup_id, commit_id, path, committed_at) VALUES (?, ?, ?, ?) ON CONFLICT (backup_id) DO NOTHING').run(
      backupId,
      commitId,
      path,
      at,
    );
    db.prepare('DELETE FROM git_mirror_pending WHERE backup_id = ?').run(backupId);
  }).immediate();
}

/** A new repository: every version is to be written again (the backfill does it). */
export function forgetCommits(db: DB): void {
  db.prepare('DELETE FROM git_mirror_commits').run();
}

export function dropPending(db: DB, backupId: string): void {
  db.prepare('DELETE FROM git_mirror_pending WHERE backup_id = ?').run(backupId);
}

export function mirrorCounts(db: DB): { pending: number; committed: number; overflowed: number; enabled: boolean } {
  const state = db.prepare('SELECT enabled, overflowed FROM git_mirror_state WHERE id = 1').get() as { enabled: number; overflowed: number } | undefined;
  return {
    pending: db.prepare('SELECT count(*) FROM git_mirror_pending').pluck().get() as number,
    committed: db.prepare('SELECT count(*) FROM git_mirror_commits').pluck().get() as number,
    overflowed: state?.overflowed ?? 0,
    enabled: state?.enabled === 1,
  };
}

/** After a backfill the overflowed versions are in git: the count starts again. */
export function clearOverflow(db: DB): void {
  db.prepare('UPDATE git_mirror_state SET overflowed = 0 WHERE id = 1').run();
}

export function getRemote(db: DB, url: string): RemoteRow {
  db.prepare('INSERT INTO git_mirror_remotes (url) VALUES (?) ON CONFLICT (url) DO NOTHING').run(url);
  return db.prepare('SELECT * FROM git_mirror_remotes WHERE url = ?').get(url) as RemoteRow;
}

export function listRemotes(db: DB): RemoteRow[] {
  return db.prepare('SELECT * FROM git_mirror_remotes ORDER BY url').all() as RemoteRow[];
}

export function recordPushed(db: DB, url: string, commit: string, at: number): void {
  db.prepare(
    'UPDATE git_mirror_remotes SET pushed_commit = ?, pushed_at = ?, attempts = 0, next_attempt_at = 0, last_error = NULL, rejected = 0 WHERE url = ?',
  ).run(commit, at, url);
}

export function recordPushFailure(db: DB, url: string, error: string, rejected: boolean, nextAttemptAt: number): void {
  db.prepare(
    `UPDATE git_mirror_remotes SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, rejected = ?,
       rejected_total = rejected_total + ?, failures_total = failures_total + 1 WHERE url = ?`,
  ).run(nextAttemptAt, error, rejected ? 1 : 0, rejected ? 1 : 0, url);
}

/** What /metrics reads of the mirror: versions by state, and push failures over all remotes (no URL in a label). */
export function mirrorMetrics(db: DB): { pending: number; committed: number; overflowed: number; rejected: number; unreachable: number; rejectedNow: number } {
  const r = db
    .prepare(
      'SELECT ifnull(sum(rejected_total), 0) AS rejected, ifnull(sum(failures_total - rejected_total), 0) AS unreachable, ifnull(sum(rejected), 0) AS rejectedNow FROM git_mirror_remotes',
    )
    .get() as { rejected: number; unreachable: number; rejectedNow: number };
  const c = mirrorCounts(db);
  return { pending: c.pending, committed: c.committed, overflowed: c.overflowed, ...r };
}
