// Backup jobs and their per-device items (schema/0017): rows, scoped reads, the claim of queued jobs, item progress, the sweep of dead jobs.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export type JobState = 'queued' | 'running' | 'finished' | 'cancelled' | 'interrupted';
export type ItemState = 'queued' | 'running' | 'retrying' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'interrupted';
export const OPEN_ITEM_STATES: readonly ItemState[] = ['queued', 'running', 'retrying'];

export interface JobRow {
  id: string;
  selection: 'devices' | 'group' | 'all';
  group_id: number | null;
  label: string;
  requested_by: string;
  user_id: number | null;
  door: 'api' | 'web' | 'cli' | 'system';
  state: JobState;
  owner: string | null;
  heartbeat_at: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  cancelled_by: string | null;
}

export interface ItemRow {
  job_id: string;
  device_id: number;
  device_name: string;
  group_id: number | null;
  state: ItemState;
  outcome: 'first' | 'changed' | 'unchanged' | null;
  attempt: number;
  reason: string | null;
  message: string | null;
  failure_type: string | null;
  backup_id: string | null;
  cancel_requested: number;
  started_at: number | null;
  finished_at: number | null;
}

/** Per-job counts of item states and outcomes (of the items a reader may see). */
export interface JobCounts {
  job_id: string;
  total: number;
  queued: number;
  running: number;
  retrying: number;
  succeeded: number;
  first: number;
  changed: number;
  failed: number;
  skipped: number;
  cancelled: number;
  interrupted: number;
}

/** The group ids a scoped reader may see, as a bound JSON array; null reads every item. */
type GroupFilter = string | null;

export function groupFilter(groupIds: readonly number[] | null): GroupFilter {
  return groupIds === null ? null : JSON.stringify(groupIds);
}

/**
 * An item is in the reader's scope when its device's group is: the device's group now (a device moved into the reader's
 * groups since the job brings its items along; one moved out takes them away), or, for a device deleted since, the
 * group it had when the job was requested.
 */
const ITEM_GROUP = `(SELECT CASE WHEN count(*) = 0 THEN i.group_id ELSE max(d.group_id) END FROM devices d WHERE d.id = i.device_id)`;
const ITEM_IN_SCOPE = `(@groups IS NULL OR ${ITEM_GROUP} IN (SELECT value FROM json_each(@groups)))`;

export function insertJob(db: DB, j: Omit<JobRow, 'finished_at' | 'cancelled_by'>): void {
  prepareCached(
    db,
    `INSERT INTO backup_jobs (id, selection, group_id, label, requested_by, user_id, door, state, owner, heartbeat_at, created_at, started_at)
     VALUES (@id, @selection, @group_id, @label, @requested_by, @user_id, @door, @state, @owner, @heartbeat_at, @created_at, @started_at)`,
  ).run(j);
}

export function insertJobItem(db: DB, jobId: string, d: { id: number; name: string; group_id: number | null }): void {
  prepareCached(db, `INSERT INTO backup_job_items (job_id, device_id, device_name, group_id, state) VALUES (?, ?, ?, ?, 'queued')`).run(
    jobId,
    d.id,
    d.name,
    d.group_id,
  );
}

/** Name and group of the devices given (missing ones are left out), in id order. */
export function deviceFactRows(db: DB, ids: readonly number[]): { id: number; name: string; group_id: number | null }[] {
  return prepareCached(db, 'SELECT id, name, group_id FROM devices WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id').all(JSON.stringify(ids)) as {
    id: number;
    name: string;
    group_id: number | null;
  }[];
}

export function getJobRow(db: DB, id: string): JobRow | undefined {
  return prepareCached(db, 'SELECT * FROM backup_jobs WHERE id = ?').get(id) as JobRow | undefined;
}

/** Whether the job has at least one item the reader may see. */
export function jobHasItemInScope(db: DB, id: string, groupIds: readonly number[] | null): boolean {
  return (
    prepareCached(db, `SELECT 1 FROM backup_job_items i WHERE i.job_id = @id AND ${ITEM_IN_SCOPE} LIMIT 1`).get({ id, groups: groupFilter(groupIds) }) !==
    undefined
  );
}

/**
 * The newest jobs with at least one item the reader may see. `openOnly`: queued and running jobs only;
 * `userId`: only that user's jobs.
 */
const JOBS_WHERE = `(@open = 0 OR j.state IN ('queued', 'running'))
        AND (@user IS NULL OR j.user_id = @user)
        AND EXISTS (SELECT 1 FROM backup_job_items i WHERE i.job_id = j.id AND ${ITEM_IN_SCOPE})`;

export interface JobFilter {
  groupIds: readonly number[] | null;
  openOnly: boolean;
  userId: number | null;
}

const jobFilterParams = (f: JobFilter) => ({ open: f.openOnly ? 1 : 0, user: f.userId, groups: groupFilter(f.groupIds) });

export function listJobRows(db: DB, f: JobFilter & { limit: number; offset?: number }): JobRow[] {
  return prepareCached(db, `SELECT j.* FROM backup_jobs j WHERE ${JOBS_WHERE} ORDER BY j.created_at DESC, j.id DESC LIMIT @limit OFFSET @offset`).all({
    ...jobFilterParams(f),
    limit: f.limit,
    offset: f.offset ?? 0,
  }) as JobRow[];
}

export function countJobRows(db: DB, f: JobFilter): number {
  return prepareCached(db, `SELECT count(*) FROM backup_jobs j WHERE ${JOBS_WHERE}`).pluck().get(jobFilterParams(f)) as number;
}

export function jobCountRows(db: DB, jobIds: readonly string[], groupIds: readonly number[] | null): JobCounts[] {
  return prepareCached(
    db,
    `SELECT i.job_id, count(*) AS total,
            sum(i.state = 'queued') AS queued, sum(i.state = 'running') AS running, sum(i.state = 'retrying') AS retrying,
            sum(i.state = 'succeeded') AS succeeded, sum(i.outcome = 'first') AS first, sum(i.outcome = 'changed') AS changed,
            sum(i.state = 'failed') AS failed, sum(i.state = 'skipped') AS skipped, sum(i.state = 'cancelled') AS cancelled,
            sum(i.state = 'interrupted') AS interrupted
       FROM backup_job_items i
      WHERE i.job_id IN (SELECT value FROM json_each(@ids)) AND ${ITEM_IN_SCOPE}
      GROUP BY i.job_id`,
  ).all({ ids: JSON.stringify(jobIds), groups: groupFilter(groupIds) }) as JobCounts[];
}

export function listItemRows(db: DB, jobId: string, groupIds: readonly number[] | null): ItemRow[] {
  return prepareCached(db, `SELECT i.* FROM backup_job_items i WHERE i.job_id = @id AND ${ITEM_IN_SCOPE} ORDER BY i.device_name, i.device_id`).all({
    id: jobId,
    groups: groupFilter(groupIds),
  }) as ItemRow[];
}

export function getItemRow(db: DB, jobId: string, deviceId: number): ItemRow | undefined {
  return prepareCached(db, 'SELECT * FROM backup_job_items WHERE job_id = ? AND device_id = ?').get(jobId, deviceId) as ItemRow | undefined;
}

export function jobDeviceIds(db: DB, jobId: string, state: ItemState): number[] {
  return prepareCached(db, 'SELECT device_id FROM backup_job_items WHERE job_id = ? AND state = ? ORDER BY device_id').pluck().all(jobId, state) as number[];
}

/** Queued jobs, oldest first: the server's poll every second, through the partial index backup_jobs_queued. */
export const QUEUED_JOBS_SQL = `SELECT id FROM backup_jobs WHERE state = 'queued' ORDER BY created_at`;
export function queuedJobIds(db: DB): string[] {
  return prepareCached(db, QUEUED_JOBS_SQL).pluck().all() as string[];
}

/** Take a queued job for `owner`; false when another process took it first. */
export function claimJobRow(db: DB, id: string, owner: string, at: number): boolean {
  return (
    prepareCached(db, `UPDATE backup_jobs SET state = 'running', owner = ?, heartbeat_at = ?, started_at = ? WHERE id = ? AND state = 'queued'`).run(
      owner,
      at,
      at,
      id,
    ).changes === 1
  );
}

export function touchJobRows(db: DB, ids: readonly string[], at: number): void {
  prepareCached(db, `UPDATE backup_jobs SET heartbeat_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND state = 'running'`).run(at, JSON.stringify(ids));
}

export function finishJobRow(db: DB, id: string, state: 'finished' | 'cancelled' | 'interrupted', at: number): void {
  prepareCached(db, `UPDATE backup_jobs SET state = ?, finished_at = ?, owner = NULL WHERE id = ? AND state IN ('queued', 'running')`).run(state, at, id);
}

export function setJobCancelledBy(db: DB, id: string, by: string): void {
  prepareCached(db, 'UPDATE backup_jobs SET cancelled_by = ? WHERE id = ?').run(by, id);
}

/** An open item starts (or is retried): running with its attempt number. Returns false when it is no longer open. */
export function markItemRunning(db: DB, jobId: string, deviceId: number, at: number): boolean {
  return (
    prepareCached(
      db,
      `UPDATE backup_job_items SET state = 'running', attempt = 1, started_at = ?
        WHERE job_id = ? AND device_id = ? AND state = 'queued' AND cancel_requested = 0`,
    ).run(at, jobId, deviceId).changes === 1
  );
}

export function markItemRetrying(db: DB, jobId: string, deviceId: number, attempt: number, reason: string): void {
  prepareCached(
    db,
    `UPDATE backup_job_items SET state = 'retrying', attempt = ?, reason = ? WHERE job_id = ? AND device_id = ? AND state IN ('running', 'retrying')`,
  ).run(attempt + 1, reason, jobId, deviceId);
}

export function finishItemRow(
  db: DB,
  jobId: string,
  deviceId: number,
  f: Pick<ItemRow, 'state' | 'outcome' | 'message' | 'failure_type' | 'backup_id'> & { attempt: number; at: number },
): void {
  prepareCached(
    db,
    `UPDATE backup_job_items SET state = @state, outcome = @outcome, message = @message, failure_type = @failure_type, backup_id = @backup_id,
            attempt = max(attempt, @attempt), finished_at = @at
      WHERE job_id = @job AND device_id = @device AND state IN ('queued', 'running', 'retrying')`,
  ).run({ ...f, job: jobId, device: deviceId });
}

/** Close the open items of a job (all, or those in the reader's groups) with a final state and message; returns how many. */
export function closeOpenItems(
  db: DB,
  jobId: string,
  from: readonly ItemState[],
  to: 'cancelled' | 'interrupted',
  message: string,
  at: number,
  groupIds: readonly number[] | null = null,
): number {
  return prepareCached(
    db,
    `UPDATE backup_job_items AS i SET state = @to, message = @message, finished_at = @at
      WHERE i.job_id = @id AND i.state IN (SELECT value FROM json_each(@from)) AND ${ITEM_IN_SCOPE}`,
  ).run({ id: jobId, from: JSON.stringify(from), to, message, at, groups: groupFilter(groupIds) }).changes;
}

/** Ask the process running a job to stop these running items (in the reader's groups); returns how many. */
export function requestItemCancel(db: DB, jobId: string, groupIds: readonly number[] | null): number {
  return prepareCached(
    db,
    `UPDATE backup_job_items AS i SET cancel_requested = 1 WHERE i.job_id = @id AND i.state IN ('running', 'retrying') AND ${ITEM_IN_SCOPE}`,
  ).run({ id: jobId, groups: groupFilter(groupIds) }).changes;
}

/** Device ids of a job's running items whose cancel was asked for. */
export function cancelRequestedIds(db: DB, jobId: string): number[] {
  return prepareCached(db, `SELECT device_id FROM backup_job_items WHERE job_id = ? AND cancel_requested = 1 AND state IN ('running', 'retrying')`)
    .pluck()
    .all(jobId) as number[];
}

export function openItemCount(db: DB, jobId: string): number {
  return prepareCached(db, `SELECT count(*) FROM backup_job_items WHERE job_id = ? AND state IN ('queued', 'running', 'retrying')`)
    .pluck()
    .get(jobId) as number;
}

/** Running jobs whose process stopped renewing the heartbeat before `before` (it died): the partial index backup_jobs_running. */
export const STALE_JOBS_SQL = `SELECT id FROM backup_jobs WHERE state = 'running' AND heartbeat_at < ?`;
export function staleJobIds(db: DB, before: number): string[] {
  return prepareCached(db, STALE_JOBS_SQL).pluck().all(before) as string[];
}

/** Running jobs of one owner (a process starting again under the same owner name finds its dead jobs). */
export function ownedJobIds(db: DB, owner: string): string[] {
  return prepareCached(db, `SELECT id FROM backup_jobs WHERE state = 'running' AND owner = ?`).pluck().all(owner) as string[];
}

/** Jobs finished before `before`, for retention. */
export function deleteFinishedJobsBefore(db: DB, before: number): number {
  return prepareCached(db, `DELETE FROM backup_jobs WHERE state NOT IN ('queued', 'running') AND created_at < ?`).run(before).changes;
}

/** Put a job's interrupted items (those in the reader's groups) back in the queue, as if never started; returns how many. */
export function requeueInterruptedItems(db: DB, jobId: string, groupIds: readonly number[] | null): number {
  return prepareCached(
    db,
    `UPDATE backup_job_items AS i SET state = 'queued', outcome = NULL, attempt = 0, reason = NULL, message = NULL, failure_type = NULL,
            backup_id = NULL, cancel_requested = 0, started_at = NULL, finished_at = NULL
      WHERE i.job_id = @id AND i.state = 'interrupted' AND ${ITEM_IN_SCOPE}`,
  ).run({ id: jobId, groups: groupFilter(groupIds) }).changes;
}

/** An interrupted job open again: queued for the server (owner null), or run at once by `owner`. False when it is not interrupted. */
export function reopenJobRow(db: DB, id: string, owner: string | null, at: number): boolean {
  return (
    prepareCached(
      db,
      `UPDATE backup_jobs SET state = @state, owner = @owner, heartbeat_at = @beat, started_at = @started, finished_at = NULL, cancelled_by = NULL
        WHERE id = @id AND state = 'interrupted'`,
    ).run({ id, state: owner ? 'running' : 'queued', owner, beat: owner ? at : null, started: owner ? at : null }).changes === 1
  );
}

/** Interrupted jobs that ended after `since` and still hold interrupted items, newest first (what `serve` offers to resume). */
export function interruptedJobRows(db: DB, since: number): { id: string; label: string; interrupted: number }[] {
  return db
    .prepare(
      `SELECT j.id, j.label, (SELECT count(*) FROM backup_job_items i WHERE i.job_id = j.id AND i.state = 'interrupted') AS interrupted
         FROM backup_jobs j WHERE j.state = 'interrupted' AND j.finished_at >= ? ORDER BY j.finished_at DESC LIMIT 20`,
    )
    .all(since) as { id: string; label: string; interrupted: number }[];
}
