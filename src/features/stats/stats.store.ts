// Queries behind the statistics endpoint: counters kept by triggers (0001, 0002) and index-only counts, never a scan of backups.
import type { DB } from '../../db/open';
import { explainQueryPlan, statementSet } from '../../db/statements';

/** Width of the started_at buckets of backup_outcome_buckets (schema 0002). */
export const OUTCOME_BUCKET_MS = 600_000;
/** Width of the buckets listChangeBuckets counts changes in. */
export const CHANGE_BUCKET_MS = 900_000;

export interface InventoryCounts {
  devices: number;
  devices_enabled: number;
  devices_unreachable: number;
  groups: number;
  credentials: number;
  templates: number;
}

export interface BackupCounters {
  total: number;
  bytes_before_dedup: number;
  running: number;
  snapshot_files: number;
  bytes_stored: number;
}

export interface OutcomeCounts {
  succeeded: number;
  failed: number;
}

function prepareStatements(db: DB) {
  return {
    // Devices are few (10,000 scan in about a millisecond); unreachable uses devices_reachability.
    inventory: db.prepare(
      `SELECT (SELECT count(*) FROM devices) AS devices,
              (SELECT count(*) FROM devices WHERE enabled = 1) AS devices_enabled,
              (SELECT count(*) FROM devices WHERE reachability = 'unreachable') AS devices_unreachable,
              (SELECT count(*) FROM device_groups) AS groups,
              (SELECT count(*) FROM credentials) AS credentials,
              (SELECT count(*) FROM templates) AS templates`,
    ),
    // Running backups come from the partial index backups_running, which holds only them.
    counters: db.prepare(
      `SELECT t.total, t.bytes_before_dedup,
              (SELECT count(*) FROM backups WHERE finished_at IS NULL) AS running,
              s.files AS snapshot_files, s.bytes_stored
         FROM backup_totals t, snapshot_totals s
        WHERE t.id = 1 AND s.id = 1`,
    ),
    bucketSums: db.prepare('SELECT ifnull(sum(succeeded), 0) AS succeeded, ifnull(sum(failed), 0) AS failed FROM backup_outcome_buckets WHERE bucket >= ?'),
    // At most one bucket's worth of records, found through backups_started.
    exactRange: db.prepare(
      `SELECT ifnull(sum(success), 0) AS succeeded, ifnull(sum(1 - success), 0) AS failed
         FROM backups WHERE started_at >= ? AND started_at < ? AND finished_at IS NOT NULL`,
    ),
  };
}

// Prepared once per database handle; a closed handle's entry goes with it.
const stmts = statementSet(prepareStatements);

/** The query plan of one of the statements above, run with `args` (for the query-plan tests). */
export function explainStatsStatement(db: DB, name: keyof ReturnType<typeof prepareStatements>, ...args: unknown[]): string[] {
  return explainQueryPlan(db, stmts(db)[name].source, args);
}

export function getInventoryCounts(db: DB): InventoryCounts {
  return stmts(db).inventory.get() as InventoryCounts;
}

export function getBackupCounters(db: DB): BackupCounters {
  return stmts(db).counters.get() as BackupCounters;
}

/**
 * Finished records that started at or after `since`, by outcome: whole buckets from the counters, plus an
 * exact count of the records in the part of the first bucket that lies inside the window.
 */
export function countOutcomesSince(db: DB, since: number): OutcomeCounts {
  const firstWhole = Math.ceil(since / OUTCOME_BUCKET_MS);
  const whole = stmts(db).bucketSums.get(firstWhole) as OutcomeCounts;
  const edge = stmts(db).exactRange.get(since, firstWhole * OUTCOME_BUCKET_MS) as OutcomeCounts;
  return { succeeded: whole.succeeded + edge.succeeded, failed: whole.failed + edge.failed };
}

// ---- The web dashboard: the same figures limited to a device-group scope (null: every device). ----

const scopeCond = (groupIds: readonly number[] | null) => (groupIds === null ? '' : 'AND d.group_id IN (SELECT value FROM json_each(@groups))');
const scopeParams = (groupIds: readonly number[] | null) => (groupIds === null ? {} : { groups: JSON.stringify(groupIds) });

/** Devices in service (total, enabled, unreachable) and, counted apart, the retired ones. */
export function countScopedDevices(db: DB, groupIds: readonly number[] | null): { total: number; enabled: number; unreachable: number; retired: number } {
  return db
    .prepare(
      `SELECT ifnull(sum(d.retired_at IS NULL), 0) AS total, ifnull(sum(d.enabled), 0) AS enabled,
              ifnull(sum(d.reachability = 'unreachable'), 0) AS unreachable, ifnull(sum(d.retired_at IS NOT NULL), 0) AS retired
         FROM devices d WHERE 1 = 1 ${scopeCond(groupIds)}`,
    )
    .get(scopeParams(groupIds)) as { total: number; enabled: number; unreachable: number; retired: number };
}

export interface OutcomeBucketRow {
  bucket: number;
  succeeded: number;
  failed: number;
}

/** Finished backups per 10-minute bucket since `since`: from the counters for every device, else from the records of the scope's devices. */
export function listOutcomeBuckets(db: DB, groupIds: readonly number[] | null, since: number): OutcomeBucketRow[] {
  if (groupIds === null) {
    return db
      .prepare('SELECT bucket, succeeded, failed FROM backup_outcome_buckets WHERE bucket >= ? ORDER BY bucket')
      .all(Math.floor(since / OUTCOME_BUCKET_MS)) as OutcomeBucketRow[];
  }
  return db
    .prepare(
      `SELECT b.started_at / ${OUTCOME_BUCKET_MS} AS bucket, sum(b.success) AS succeeded, sum(1 - b.success) AS failed
         FROM devices d JOIN backups b ON b.device_id = d.id
        WHERE b.started_at >= @since AND b.finished_at IS NOT NULL ${scopeCond(groupIds)}
        GROUP BY bucket ORDER BY bucket`,
    )
    .all({ since, ...scopeParams(groupIds) }) as OutcomeBucketRow[];
}

/**
 * Changed versions since `since`, counted per 15-minute bucket of started_at (read through the partial index of
 * schema 0003): one row per bucket instead of one per version, and no join for every device. Time-zone offsets are
 * whole quarter hours, so a bucket never straddles a local midnight.
 */
export function listChangeBuckets(db: DB, groupIds: readonly number[] | null, since: number): { bucket: number; n: number }[] {
  const from = groupIds === null ? 'backups b' : 'backups b JOIN devices d ON d.id = b.device_id';
  return db
    .prepare(
      `SELECT b.started_at / ${CHANGE_BUCKET_MS} AS bucket, count(*) AS n FROM ${from}
        WHERE b.changed = 1 AND b.started_at >= @since ${scopeCond(groupIds)} GROUP BY bucket`,
    )
    .all({ since, ...scopeParams(groupIds) }) as { bucket: number; n: number }[];
}

/**
 * Enabled devices (so in service: a retired device is never enabled) with no successful backup since `staleBefore`
 * (counting from when the device was added), and those with none at all: the dashboard's two tiles in one pass over
 * the devices, each reading its history's index entries once.
 */
export function countStaleDevices(db: DB, groupIds: readonly number[] | null, staleBefore: number): { stale: number; never: number } {
  return db
    .prepare(
      `SELECT ifnull(sum(coalesce(x.last_ok, x.created_at) < @stale_before), 0) AS stale, ifnull(sum(x.last_ok IS NULL), 0) AS never
         FROM (SELECT d.created_at, (SELECT max(b.finished_at) FROM backups b WHERE b.device_id = d.id AND b.success = 1) AS last_ok
                 FROM devices d WHERE d.enabled = 1 ${scopeCond(groupIds)}) x`,
    )
    .get({ stale_before: staleBefore, ...scopeParams(groupIds) }) as { stale: number; never: number };
}

export interface FailureRow {
  backup_id: string;
  device_id: number;
  device_name: string;
  started_at: number;
  failure_type: string | null;
  error_message: string | null;
}

export function listRecentFailures(db: DB, groupIds: readonly number[] | null, since: number, limit: number): FailureRow[] {
  return db
    .prepare(
      `SELECT b.id AS backup_id, d.id AS device_id, d.name AS device_name, b.started_at, b.failure_type, b.error_message
         FROM backups b JOIN devices d ON d.id = b.device_id
        WHERE b.started_at >= @since AND b.finished_at IS NOT NULL AND b.success = 0 AND d.retired_at IS NULL ${scopeCond(groupIds)}
        ORDER BY b.started_at DESC LIMIT @limit`,
    )
    .all({ since, limit, ...scopeParams(groupIds) }) as FailureRow[];
}
