// The zone work queue: due backups of remote zones queued, leased to a collector of the zone (secrets sealed to it), results stored as local backups.
import { randomUUID } from 'node:crypto';
import { withEngineSync, type DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { SecretBox } from '../../identity/secrets';
import { sealerTo, sha256Text, type ResultOutcome, type Sealed } from '../../lib/collector-protocol';
import type { SnapshotStore } from '../../store/snapshots';
import type { TemplateSpec } from '../../templates/types';
import type { SourceEncoding } from '../../lib/decode';
import { loadBackupPlan, loadResultPlan, recordDeviceContact } from '../backups/backup-engine.service';
import { finishBackups, nameRunningSnapshot, startBackup, type BackupToFinish } from '../backups/backup-record.service';
import { closeAsFailed, recordingFailure } from '../backups/unclosed-backups';
import { FAILURE_TYPES, type FailureType } from '../backups/failure-types';
import {
  countLeases,
  deleteResultRow,
  deleteWorkByLease,
  effectiveZoneRows,
  expireLeaseRows,
  getCollectorRow,
  getResultRow,
  getWorkByLease,
  hasLeasableWorkRow,
  insertResultRow,
  leaseWorkRow,
  queueWorkRow,
  queuedWorkRows,
  releaseLeaseRows,
  renewLeaseRows,
  zonedDeviceIdRows,
  type CollectorRow,
  type WorkRow,
} from './collectors.store';

/**
 * Queues the devices of remote zones for their collectors and returns the others (the central backs those up
 * itself). A device queued already keeps its place: a schedule firing twice before a collector came queues it once.
 */
export function leaveZonedToCollectors(db: DB, deviceIds: readonly number[], trigger: WorkRow['trigger'], at = Date.now()): number[] {
  if (deviceIds.length === 0) return [];
  const zoned = effectiveZoneRows(db, deviceIds);
  if (zoned.length === 0) return [...deviceIds];
  db.transaction(() => {
    for (const z of zoned) queueWorkRow(db, z.device_id, z.zone, trigger, at);
  }).immediate();
  const remote = new Set(zoned.map((z) => z.device_id));
  return deviceIds.filter((id) => !remote.has(id));
}

/** Every device served by a collector (the central's reachability probe leaves them alone: it cannot reach them). */
export function zonedDeviceIds(db: DB): Set<number> {
  return new Set(zonedDeviceIdRows(db));
}

/** What a collector needs to back up one device; `sealed` opens (with its X25519 key only) to a SealedJob. */
export interface LeasedJob {
  lease_id: string;
  device_id: number;
  device_name: string;
  expires_at: number;
  template: TemplateSpec;
  sealed: Sealed;
}

/** The secrets of one job: address with credential, and the redaction key (null: store as received). */
export interface SealedJob {
  target: unknown;
  redact_key: string | null;
}

/**
 * Leases up to `max` of the collector's zone's queued backups for `leaseMs`. The leases the collector says it still
 * holds (`held`: running, waiting or not yet delivered) are extended first, those it gives back unstarted (`release`:
 * it is stopping) return to the queue at once; leases that ran out then return to the
 * queue. A device whose zone changed since it was queued is dropped, so credentials go only to its own zone.
 */
export function leaseWork(
  db: DB,
  secrets: SecretBox,
  collector: CollectorRow,
  o: { max: number; leaseMs: number; redact: boolean; held?: readonly string[]; release?: readonly string[] },
  at = Date.now(),
): LeasedJob[] {
  const leased: { row: WorkRow; leaseId: string }[] = [];
  // An engine record (no fsync on the event loop, db/open.ts): a lease lost to a power cut leaves the device queued,
  // and the collector's result for it is refused as an unknown lease; the device is leased and backed up again.
  withEngineSync(db, () =>
    db
      .transaction(() => {
        releaseLeaseRows(db, collector.id, o.release ?? []);
        renewLeaseRows(db, collector.id, o.held ?? [], at + o.leaseMs);
        expireLeaseRows(db, at);
        const rows = o.max > 0 ? queuedWorkRows(db, collector.zone, Math.min(o.max, 100)) : [];
        const zones = new Map(
          effectiveZoneRows(
            db,
            rows.map((r) => r.device_id),
          ).map((z) => [z.device_id, z.zone]),
        );
        for (const row of rows) {
          const leaseId = randomUUID();
          if (zones.get(row.device_id) !== collector.zone) {
            // Moved to another zone (or back to the central) since it was queued: this collector must not get its credential.
            leaseWorkRow(db, row.device_id, leaseId, collector.id, at);
            deleteWorkByLease(db, leaseId);
            continue;
          }
          if (leaseWorkRow(db, row.device_id, leaseId, collector.id, at + o.leaseMs)) leased.push({ row, leaseId });
        }
        countLeases(db, collector.id, leased.length);
      })
      .immediate(),
  );
  const jobs: LeasedJob[] = [];
  // One ephemeral key for the answer's jobs, each still sealed on its own (collectors-bench, #27).
  const seal = leased.length > 0 ? sealerTo(collector.sealing_key) : null;
  for (const { row, leaseId } of leased) {
    const plan = loadBackupPlan(db, secrets, row.device_id);
    if (!plan) {
      deleteWorkByLease(db, leaseId);
      continue;
    }
    const job: SealedJob = { target: plan.target, redact_key: o.redact ? secrets.redactionKey.toString('base64') : null };
    jobs.push({
      lease_id: leaseId,
      device_id: row.device_id,
      device_name: plan.deviceName,
      expires_at: at + o.leaseMs,
      template: plan.template,
      sealed: seal!(job),
    });
  }
  return jobs;
}

/** A held lease request looks at the zone's queue this often. */
const HOLD_CHECK_MS = 250;

/**
 * leaseWork, but when the zone has nothing to lease the request is held up to `holdMs` and answered as soon as work
 * is queued (protocol 2): an idle collector hears of a schedule firing within HOLD_CHECK_MS, not a poll interval
 * later. Holding costs one indexed read per check; `signal` (the client went away) ends it early.
 */
export async function leaseWorkHeld(
  db: DB,
  secrets: SecretBox,
  collector: CollectorRow,
  o: Parameters<typeof leaseWork>[3] & { holdMs: number; signal?: AbortSignal },
): Promise<LeasedJob[]> {
  const end = Date.now() + o.holdMs;
  let jobs = leaseWork(db, secrets, collector, o);
  while (jobs.length === 0 && Date.now() < end && !o.signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(HOLD_CHECK_MS, end - Date.now())));
    if (!hasLeasableWorkRow(db, collector.zone, Date.now())) continue;
    // Revoked while its request was held: it gets no credential from then on.
    if (getCollectorRow(db, collector.id)?.revoked_at !== null) break;
    jobs = leaseWork(db, secrets, collector, o);
  }
  return jobs;
}

/** What a collector uploads for one lease: the stored-ready text and its SHA-256, or a classified failure. */
export type UploadInput = {
  lease_id: string;
  started_at: number;
  duration_ms: number;
  host_key: string | null;
  reachability: 'reachable' | 'unreachable' | null;
} & ({ ok: true; text: string; sha256: string; encoding: SourceEncoding | null } | { ok: false; failure: string; message: string });

/** Uploads being stored right now, by lease id: a retry arriving meanwhile is told to come back (409), never stored twice. */
const storing = new Set<string>();

/** An upload that passed its checks, with what storing it needs. */
interface AcceptedUpload {
  input: UploadInput;
  work: WorkRow;
  plan: NonNullable<ReturnType<typeof loadResultPlan>>;
}

/**
 * The checks of one upload, before anything is written: stored before (the backup it made), or accepted. Refused with
 * an ApiError: a hash that does not match the text, an unknown failure type, a lease being stored by another request
 * (retry), a lease that ran out or is another collector's, a device or template gone (its lease is dropped).
 */
function checkUpload(db: DB, collector: CollectorRow, input: UploadInput): { stored: string } | AcceptedUpload {
  const before = getResultRow(db, input.lease_id);
  if (before) {
    if (before.collector_id !== collector.id) throw new ApiError('CONFLICT', 'This lease belongs to another collector.');
    return { stored: before.backup_id };
  }
  if (input.ok && sha256Text(input.text) !== input.sha256) {
    throw ApiError.validation([{ field: 'sha256', message: 'does not match the text' }], 'The uploaded text does not match its hash.');
  }
  if (!input.ok && !(FAILURE_TYPES as readonly string[]).includes(input.failure)) {
    throw ApiError.validation([{ field: 'failure', message: 'unknown failure type' }]);
  }
  if (storing.has(input.lease_id)) throw new ApiError('CONFLICT', 'This lease is being stored; retry in a moment.', { retry: true });
  const work = getWorkByLease(db, input.lease_id);
  if (!work || work.collector_id !== collector.id) throw new ApiError('CONFLICT', 'Lease expired or unknown: the backup went back to the queue.');
  const plan = loadResultPlan(db, work.device_id);
  if (!plan) {
    deleteWorkByLease(db, input.lease_id);
    throw new ApiError('CONFLICT', 'The device or its template is gone.');
  }
  return { input, work, plan };
}

/**
 * Stores a batch of results (protocol 2) through the same path as local backups (running record, snapshot, record) and
 * answers each: stored or duplicate (the site drops it), refused (dropped too: a bad hash, an expired or foreign
 * lease; said per result) or retry (the same lease is being stored by another request). `invalid` holds results that
 * failed the schema, by index. The results that pass their checks are stored together (collectors-bench, #27): their
 * running records in one commit (each naming its text's hash, checked first, before any file is written:
 * docs/snapshot-lifecycle.md), then the snapshot files, then their outcomes in one commit with their leases removed.
 * A snapshot that cannot be written (disk full) ends the request with a 500 after the others are recorded: that
 * result's record closes as STORAGE_ERROR and its lease's result row goes with it, so the batch the site sends again
 * stores it, and what was stored comes back as a duplicate.
 */
export async function storeUploads(
  db: DB,
  store: SnapshotStore,
  collector: CollectorRow,
  inputs: readonly (UploadInput | { lease_id: string; invalid: string })[],
  at = Date.now(),
): Promise<ResultOutcome[]> {
  const out: ResultOutcome[] = [];
  const accepted: AcceptedUpload[] = [];
  /** A lease sent twice in one batch: answered as a duplicate of the first (by its index in `accepted`). */
  const repeats: { at: number; of: number }[] = [];
  for (const input of inputs) {
    if ('invalid' in input) {
      out.push({ lease_id: input.lease_id, outcome: 'refused', message: input.invalid });
      continue;
    }
    const first = accepted.findIndex((a) => a.input.lease_id === input.lease_id);
    if (first >= 0) {
      repeats.push({ at: out.length, of: first });
      out.push({ lease_id: input.lease_id, outcome: 'duplicate', backup_id: '' });
      continue;
    }
    try {
      const c = checkUpload(db, collector, input);
      if ('stored' in c) {
        out.push({ lease_id: input.lease_id, outcome: 'duplicate', backup_id: c.stored });
        continue;
      }
      accepted.push(c);
      out.push({ lease_id: input.lease_id, outcome: 'stored', backup_id: '' });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      out.push({ lease_id: input.lease_id, outcome: err.details.retry === true ? ('retry' as const) : ('refused' as const), message: err.message });
    }
  }
  if (accepted.length === 0) return out;
  for (const a of accepted) storing.add(a.input.lease_id);
  try {
    const ids = await storeAccepted(db, store, collector, accepted, at);
    let k = 0;
    for (const o of out) if (o.outcome === 'stored') o.backup_id = ids[k++];
    for (const r of repeats) (out[r.at] as { backup_id: string }).backup_id = ids[r.of];
    return out;
  } finally {
    for (const a of accepted) storing.delete(a.input.lease_id);
  }
}

/** The records and files of the accepted uploads (storeUploads); the backup ids, in order. */
async function storeAccepted(db: DB, store: SnapshotStore, collector: CollectorRow, accepted: readonly AcceptedUpload[], at: number): Promise<string[]> {
  const startedAt = (input: UploadInput) => Math.min(at, Math.max(at - 86_400_000, input.started_at));
  // One commit opens every record (an engine record, as a local backup's: no fsync on the event loop, db/open.ts), each
  // with its lease's result row and what the upload says of the device (reachability, host key).
  const started = withEngineSync(db, () =>
    db
      .transaction(() =>
        accepted.map(({ input, work, plan }) => {
          const s = startBackup(db, work.device_id, plan.templateId, work.trigger, startedAt(input));
          // The text's hash is known (checked): the running record names it now, before the file is written.
          if (input.ok) nameRunningSnapshot(db, s.id, input.sha256);
          insertResultRow(db, { lease_id: input.lease_id, collector_id: collector.id, device_id: work.device_id, backup_id: s.id, received_at: at });
          recordDeviceContact(db, plan, {
            reachability: input.reachability,
            error: input.ok ? null : input.message.slice(0, 1000),
            hostKey: input.host_key,
            failure: input.ok ? null : (input.failure as FailureType),
            backupId: s.id,
          });
          return s;
        }),
      )
      .immediate(),
  );
  const items: BackupToFinish[] = accepted.map(({ input, plan }, i) => ({
    started: started[i],
    outcome: input.ok
      ? { ok: true, text: input.text, ignorePatterns: plan.template.ignore_patterns, encoding: input.encoding }
      : { ok: false, failure: input.failure as FailureType, message: input.message.slice(0, 1000) },
    finishedAt: Math.max(started[i].startedAt, Math.min(at, started[i].startedAt + input.duration_ms)),
    // The lease goes in the commit that records the outcome: a crash cannot leave a stored result's lease to run out.
    onRecorded: () => deleteWorkByLease(db, input.lease_id),
    reserved: input.ok ? input.sha256 : undefined,
  }));
  let finished: Awaited<ReturnType<typeof finishBackups>>;
  try {
    finished = await finishBackups(db, store, items);
  } catch (err) {
    // The outcomes' commit failed (the database is full): each record closes as that failure, its result row with it.
    const failure = recordingFailure(db, err);
    for (const [i, { input }] of accepted.entries()) await closeAsFailed(db, store, started[i], failure, null, () => deleteResultRow(db, input.lease_id));
    throw err;
  }
  // Not stored (a full disk): the record closes as this failure, as a local backup's does, and the lease's result row
  // goes with it, so the site's retry of the batch stores the result instead of being told it is a duplicate. The
  // lease stays held.
  let firstError: { error: unknown } | undefined;
  for (const [i, f] of finished.entries()) {
    if (!('error' in f)) continue;
    firstError ??= f;
    const lease = accepted[i].input.lease_id;
    await closeAsFailed(db, store, started[i], recordingFailure(db, f.error), null, () => deleteResultRow(db, lease));
  }
  if (firstError) throw firstError.error;
  return finished.map((f) => (f as { id: string }).id);
}
