// Backup jobs as users see them: request one (a selection, a group, everything; policy, scope, audit), list, view, cancel, resume.
import { randomUUID } from 'node:crypto';
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize, denied, requireGroupInScope } from '../../identity/policy';
import { BACKUP_OPS } from './backups.policy';
import { inScope, type Principal, type Scope } from '../../identity/principal';
import { recordAudit } from '../audit/audit.service';
import { getDevice } from '../devices/devices.service';
import { getGroup } from '../groups/groups.service';
import { selectDeviceIdRows } from './backup-engine.store';
import {
  OPEN_ITEM_STATES,
  closeOpenItems,
  countJobRows,
  deleteFinishedJobsBefore,
  deviceFactRows,
  finishJobRow,
  getJobRow,
  insertJob,
  interruptedJobRows,
  insertJobItem,
  jobCountRows,
  jobHasItemInScope,
  listItemRows,
  listJobRows,
  openItemCount,
  reopenJobRow,
  requestItemCancel,
  requeueInterruptedItems,
  setJobCancelledBy,
  staleJobIds,
  type ItemRow,
  type JobCounts,
  type JobRow,
} from './jobs.store';

/** What to back up: devices picked one by one, a group with its subgroups (enabled devices), or every enabled device. */
export type JobSelection = { deviceIds: readonly number[] } | { groupId: number } | { all: true };

/** Finished jobs are kept this long, then dropped when the next job is requested. */
const KEEP_JOBS_MS = 30 * 24 * 3600_000;
/** A running job whose process has not renewed its heartbeat for this long is dead (src/engine/jobs.ts beats every 2 s). */
export const JOB_STALE_MS = 15_000;
/** Who may cancel other people's jobs (within their scope): the holders of the user-management permission. */
export const CANCEL_OTHERS_PERMISSION = 'users.update';

export interface RequestedJob {
  id: string;
  label: string;
  deviceIds: number[];
}

/**
 * A user asks for backups now. Needs backups.run; each named device and the group must exist (404) and lie in the
 * actor's scope (403); a group or "all" takes the enabled devices within the scope only. One job row, one item per
 * device and one audit row commit together. `owner`: the process that runs it at once (the web server, the CLI's
 * --wait), or null to queue it for the running server.
 */
export function requestBackupJob(db: DB, actor: Actor, selection: JobSelection, owner: string | null, at = Date.now()): RequestedJob {
  authorize(actor, BACKUP_OPS.run);
  const scope = actor.principal.scope;
  return db
    .transaction(() => {
      let label: string;
      let ids: number[];
      let groupId: number | null = null;
      if ('deviceIds' in selection) {
        ids = [...new Set(selection.deviceIds)].map((id) => {
          const d = getDevice(db, scope, id);
          // A retired device is kept for its history only; backing it up again means reactivating it first.
          if (d.retired) throw new ApiError('CONFLICT', `device ${d.name} is retired: reactivate it to back it up again`);
          return d.id;
        });
        label = ids.length === 1 ? `device ${deviceFactRows(db, ids)[0]?.name ?? ids[0]}` : `${ids.length} selected devices`;
      } else if ('groupId' in selection) {
        const g = getGroup(db, scope, selection.groupId);
        requireGroupInScope(actor, g.id, `Group ${g.id}`);
        groupId = g.id;
        ids = selectDeviceIdRows(db, { groupId: g.id });
        label = `group ${g.name}`;
      } else {
        ids = selectDeviceIdRows(db, {});
        label = 'all devices';
      }
      const devices = deviceFactRows(db, ids).filter((d) => inScope(scope, d.group_id));
      if (devices.length === 0) throw ApiError.validation([], 'No enabled devices in this selection: nothing to back up');
      deleteFinishedJobsBefore(db, at - KEEP_JOBS_MS);
      const id = randomUUID();
      const kind = 'deviceIds' in selection ? 'devices' : 'groupId' in selection ? 'group' : 'all';
      insertJob(db, {
        id,
        selection: kind,
        group_id: groupId,
        label,
        requested_by: actor.principal.username,
        user_id: actor.principal.userId > 0 ? actor.principal.userId : null,
        // A job records the door it was asked through; an inventory sync never asks for one, the appliance stands in.
        door: actor.door.kind === 'inventory' ? 'system' : actor.door.kind,
        state: owner ? 'running' : 'queued',
        owner,
        heartbeat_at: owner ? at : null,
        created_at: at,
        started_at: owner ? at : null,
      });
      for (const d of devices) insertJobItem(db, id, d);
      const only = devices.length === 1 && kind === 'devices' ? devices[0] : null;
      recordAudit(
        db,
        actor,
        {
          action: 'backup.run',
          target: only ? `device ${only.id}` : kind === 'group' ? `group ${groupId}` : kind === 'all' ? 'all devices' : `${devices.length} devices`,
          details: { job: id, ...(only ? { name: only.name } : {}), devices: devices.length, device_ids: devices.slice(0, 50).map((d) => d.id) },
        },
        at,
      );
      return { id, label, deviceIds: devices.map((d) => d.id) };
    })
    .immediate();
}

/** A job's item counts, with what they imply: the items done, and the successes that stored no change. */
export type JobProgress = Omit<JobCounts, 'job_id'> & { done: number; unchanged: number };

export interface JobItemView {
  device_id: number;
  device_name: string;
  state: ItemRow['state'];
  /** For a succeeded item: "first version stored", "changed" or "no change". */
  result: string | null;
  outcome: ItemRow['outcome'];
  attempt: number;
  /** While running: "retrying: connection refused" after a failed attempt (kept after the end). */
  progress: string | null;
  failure: string | null;
  message: string | null;
  backup_id: string | null;
  started_at: number | null;
  finished_at: number | null;
}

export interface JobView {
  id: string;
  selection: JobRow['selection'];
  label: string;
  requested_by: string;
  door: JobRow['door'];
  state: JobRow['state'];
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  cancelled_by: string | null;
  progress: JobProgress;
  /** Whether the reader may cancel what is left of it. */
  can_cancel: boolean;
  /** Whether the reader may resume it (an interrupted job with interrupted backups; backups.run). */
  can_resume: boolean;
}

/** A reader of jobs: the principal's permissions, scope and user id. */
type Reader = Pick<Principal, 'userId' | 'permissions' | 'scope'>;

const scopeGroups = (scope: Scope): number[] | null => (scope.all ? null : [...scope.groupIds]);

export function outcomeWords(outcome: ItemRow['outcome']): string | null {
  return outcome === 'first' ? 'first version stored' : outcome === 'changed' ? 'changed' : outcome === 'unchanged' ? 'no change' : null;
}

function progressOf(c: JobCounts | undefined): JobProgress {
  const n = (v: number | undefined) => v ?? 0;
  const done = n(c?.succeeded) + n(c?.failed) + n(c?.skipped) + n(c?.cancelled) + n(c?.interrupted);
  return {
    done,
    total: n(c?.total),
    queued: n(c?.queued),
    running: n(c?.running),
    retrying: n(c?.retrying),
    succeeded: n(c?.succeeded),
    first: n(c?.first),
    changed: n(c?.changed),
    unchanged: n(c?.succeeded) - n(c?.first) - n(c?.changed),
    failed: n(c?.failed),
    skipped: n(c?.skipped),
    cancelled: n(c?.cancelled),
    interrupted: n(c?.interrupted),
  };
}

function mayCancel(reader: Reader, job: JobRow): boolean {
  if (!reader.permissions.has('backups.run')) return false;
  return job.user_id === reader.userId || reader.permissions.has(CANCEL_OTHERS_PERMISSION);
}

/** What a job's process left when it died: its open items end as interrupted, with this message (closeDeadJobs). */
const DEAD_MESSAGE = 'The process running this job stopped before it finished.';

/** Whether a job's process died: running, without a heartbeat for JOB_STALE_MS (the sweep closes it on its next turn). */
function isDead(job: JobRow, now: number): boolean {
  return job.state === 'running' && (job.heartbeat_at ?? 0) < now - JOB_STALE_MS;
}

/**
 * A job as the sweep will leave it: a reader never writes, so a dead job not yet swept (no server runs the sweep, or
 * it has not come round) reads as interrupted, its open items counted interrupted, as it will be stored.
 */
function settled(job: JobRow, counts: JobCounts | undefined, now: number): { job: JobRow; counts: JobCounts | undefined } {
  if (!isDead(job, now)) return { job, counts };
  const c = counts && { ...counts, interrupted: counts.interrupted + counts.queued + counts.running + counts.retrying, queued: 0, running: 0, retrying: 0 };
  return { job: { ...job, state: 'interrupted', owner: null, finished_at: job.heartbeat_at }, counts: c };
}

function jobView(reader: Reader, row: JobRow, rowCounts: JobCounts | undefined, now: number): JobView {
  const { job, counts } = settled(row, rowCounts, now);
  const progress = progressOf(counts);
  const open = job.state === 'queued' || job.state === 'running';
  return {
    id: job.id,
    selection: job.selection,
    label: job.label,
    requested_by: job.requested_by,
    door: job.door,
    state: job.state,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    cancelled_by: job.cancelled_by,
    progress,
    can_cancel: open && progress.done < progress.total && mayCancel(reader, job),
    can_resume: job.state === 'interrupted' && progress.interrupted > 0 && reader.permissions.has('backups.run'),
  };
}

export function itemView(i: ItemRow): JobItemView {
  return {
    device_id: i.device_id,
    device_name: i.device_name,
    state: i.state,
    result: i.state === 'succeeded' ? outcomeWords(i.outcome) : null,
    outcome: i.outcome,
    attempt: i.attempt,
    progress: i.reason ? `retrying: ${i.reason}` : null,
    failure: i.failure_type,
    message: i.message,
    backup_id: i.backup_id,
    started_at: i.started_at,
    finished_at: i.finished_at,
  };
}

/**
 * Close jobs whose process died (no heartbeat for JOB_STALE_MS): the job and its open items become interrupted,
 * never "running" forever. Cheap (a partial index). `serve` sweeps every JOB_BEAT_MS (src/engine/jobs.ts), a resume
 * first; readers only show a dead job as the sweep will leave it. Returns how many.
 */
export function closeDeadJobs(db: DB, now = Date.now()): number {
  const stale = staleJobIds(db, now - JOB_STALE_MS);
  if (stale.length === 0) return 0;
  db.transaction(() => {
    for (const id of stale) {
      closeOpenItems(db, id, OPEN_ITEM_STATES, 'interrupted', DEAD_MESSAGE, now);
      finishJobRow(db, id, 'interrupted', now);
    }
  }).immediate();
  return stale.length;
}

/** Recent jobs the reader may see (needs backups.view; scoped readers see jobs with devices of their groups, counted over those). */
export function listBackupJobs(db: DB, reader: Reader, opts: { openOnly?: boolean; mine?: boolean; limit?: number } = {}): JobView[] {
  return pageBackupJobs(db, reader, { ...opts, offset: 0 }).items;
}

/** One page of the jobs the reader may see, newest first, with how many there are in all (the API's paged list). */
export function pageBackupJobs(
  db: DB,
  reader: Reader,
  opts: { openOnly?: boolean; mine?: boolean; limit?: number; offset: number },
): { items: JobView[]; total: number } {
  if (!reader.permissions.has('backups.view')) throw denied('This operation needs the permission backups.view', { permission: 'backups.view' });
  const now = Date.now();
  const groups = scopeGroups(reader.scope);
  const filter = { groupIds: groups, openOnly: opts.openOnly === true, userId: opts.mine ? reader.userId : null };
  const rows = listJobRows(db, { ...filter, limit: Math.min(Math.max(opts.limit ?? 50, 1), 500), offset: opts.offset });
  const counts = new Map(
    jobCountRows(
      db,
      rows.map((r) => r.id),
      groups,
    ).map((c) => [c.job_id, c]),
  );
  const views = rows.map((r) => jobView(reader, r, counts.get(r.id), now));
  // A dead job not yet swept is stored as running but reads as interrupted: the open filter is applied to what is shown.
  return { items: opts.openOnly ? views.filter((j) => j.state === 'queued' || j.state === 'running') : views, total: countJobRows(db, filter) };
}

/**
 * One job with its items as the reader may see them. Missing: 404. Out of scope (no item in the reader's groups):
 * 403. The requester always sees their own job; anyone else needs backups.view.
 */
export function getBackupJob(db: DB, reader: Reader, id: string): JobView & { items: JobItemView[] } {
  const now = Date.now();
  const job = getJobRow(db, id);
  if (!job) throw ApiError.notFound(`backup job ${id}`);
  if (job.user_id !== reader.userId && !reader.permissions.has('backups.view')) {
    throw denied('This operation needs the permission backups.view', { permission: 'backups.view' });
  }
  const groups = scopeGroups(reader.scope);
  if (!jobHasItemInScope(db, id, groups)) throw denied(`Backup job ${id} holds no device of your device-group scope`);
  const counts = jobCountRows(db, [id], groups)[0];
  const items = listItemRows(db, id, groups);
  const dead = isDead(job, now);
  const open = (i: ItemRow) => OPEN_ITEM_STATES.includes(i.state);
  const shown = dead ? items.map((i) => (open(i) ? { ...i, state: 'interrupted' as const, message: DEAD_MESSAGE, finished_at: job.heartbeat_at } : i)) : items;
  return { ...jobView(reader, job, counts, now), items: shown.map(itemView) };
}

/** A job to act on: 404 when missing, 403 when none of its devices is in the scope; with the scope's group filter. */
function jobInScope(db: DB, scope: Scope, id: string): { job: JobRow; groups: number[] | null } {
  const job = getJobRow(db, id);
  if (!job) throw ApiError.notFound(`backup job ${id}`);
  const groups = scopeGroups(scope);
  if (!jobHasItemInScope(db, id, groups)) throw denied(`Backup job ${id} holds no device of your device-group scope`);
  return { job, groups };
}

/**
 * Cancel what is left of a job: its queued items at once, its running ones as soon as the process running them
 * notices (within a second or two). Needs backups.run; other people's jobs also need users.update; a scoped user
 * cancels only the items of their groups. One audit row. Returns how many items it cancelled or asked to stop.
 */
export function cancelBackupJob(db: DB, actor: Actor, id: string, at = Date.now()): { cancelled: number; stopping: number } {
  authorize(actor, BACKUP_OPS.cancelJob);
  return db
    .transaction(() => {
      const { job, groups } = jobInScope(db, actor.principal.scope, id);
      if (job.user_id !== actor.principal.userId && !actor.principal.permissions.has(CANCEL_OTHERS_PERMISSION)) {
        throw denied(`Only ${job.requested_by} or a holder of ${CANCEL_OTHERS_PERMISSION} may cancel this job`, { permission: CANCEL_OTHERS_PERMISSION });
      }
      if (job.state !== 'queued' && job.state !== 'running') throw new ApiError('CONFLICT', `Backup job ${id} is ${job.state}: nothing left to cancel`);
      const by = actor.principal.username;
      const cancelled = closeOpenItems(db, id, ['queued'], 'cancelled', `Cancelled by ${by} before it started.`, at, groups);
      const stopping = requestItemCancel(db, id, groups);
      setJobCancelledBy(db, id, by);
      // A queued job nobody runs yet ends here when nothing of it is left; a running one ends with its process.
      if (job.state === 'queued' && openItemCount(db, id) === 0) finishJobRow(db, id, 'cancelled', at);
      recordAudit(db, actor, { action: 'backup.cancel', target: `job ${id}`, details: { label: job.label, cancelled, stopping } }, at);
      return { cancelled, stopping };
    })
    .immediate();
}

/**
 * Resume a job a stopped process left interrupted: its interrupted items (those in the actor's groups) are queued
 * again, the job opens again, queued for the running server (`owner` null) or run at once by `owner` (the web
 * server, the CLI). The permission of running backups (backups.run) and the actor's scope, as for a new job; one
 * audit row. Missing: 404; out of scope: 403; not interrupted, or nothing of it interrupted in the scope: 409.
 * Nothing resumes a job on its own: `serve` only says which jobs it could resume (interruptedJobsToOffer).
 */
export function resumeBackupJob(db: DB, actor: Actor, id: string, owner: string | null, at = Date.now()): { resumed: number; label: string } {
  authorize(actor, BACKUP_OPS.resumeJob);
  closeDeadJobs(db, at);
  return db
    .transaction(() => {
      const { job, groups } = jobInScope(db, actor.principal.scope, id);
      if (job.state !== 'interrupted') throw new ApiError('CONFLICT', `Backup job ${id} is ${job.state}: only an interrupted job can be resumed`);
      const resumed = requeueInterruptedItems(db, id, groups);
      if (resumed === 0) throw new ApiError('CONFLICT', `Backup job ${id} has no interrupted backup left to resume`);
      reopenJobRow(db, id, owner, at);
      // Items interrupted outside the actor's scope stay closed: the job must be able to end without them.
      recordAudit(db, actor, { action: 'backup.resume', target: `job ${id}`, details: { label: job.label, resumed } }, at);
      return { resumed, label: job.label };
    })
    .immediate();
}

/** Interrupted jobs of the last `withinMs` that still have backups to resume: what `serve` tells the operator at start. */
export function interruptedJobsToOffer(db: DB, withinMs = 7 * 24 * 3600_000, now = Date.now()): { id: string; label: string; interrupted: number }[] {
  return interruptedJobRows(db, now - withinMs).filter((j) => j.interrupted > 0);
}
