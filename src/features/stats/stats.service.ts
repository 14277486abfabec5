// System statistics (spec 4.6 rule 4: permission only, no device-group filtering), read in one consistent snapshot.
import type { DB } from '../../db/open';
import { GenerationMemo } from '../../db/generation';
import type { Principal, Scope } from '../../identity/principal';
import { authorize } from '../../identity/policy';
import { STATS_OPS } from './stats.policy';
import {
  CHANGE_BUCKET_MS,
  OUTCOME_BUCKET_MS,
  countOutcomesSince,
  countScopedDevices,
  countStaleDevices,
  getBackupCounters,
  getInventoryCounts,
  listChangeBuckets,
  listOutcomeBuckets,
  listRecentFailures,
  type FailureRow,
} from './stats.store';

const DAY_MS = 86_400_000;

/**
 * The stale and never-backed-up counts read every enabled device's history (100,000 index lookups at scale): kept
 * while the database generation stands (no write since, in any process), per scope and minute of the stale threshold.
 */
const staleCounts = new GenerationMemo<string, { stale: number; never: number }>(64);

function readStaleCounts(db: DB, key: string): { stale: number; never: number } {
  const { groups, staleBefore } = JSON.parse(key) as { groups: number[] | null; staleBefore: number };
  return countStaleDevices(db, groups, staleBefore);
}

export interface Statistics {
  devices: { total: number; enabled: number; unreachable: number };
  groups: number;
  credentials: number;
  templates: number;
  backups: { total: number; last_24h: { succeeded: number; failed: number }; running: number };
  storage: { snapshot_files: number; bytes_stored: number; bytes_before_dedup: number; dedup_ratio: number };
}

/** Logical bytes over bytes on disk, two decimals; 1 when nothing is stored yet (no saving, no division by zero). */
export function dedupRatio(bytesBeforeDedup: number, bytesStored: number): number {
  if (bytesStored <= 0 || bytesBeforeDedup <= 0) return 1;
  return Math.round((bytesBeforeDedup / bytesStored) * 100) / 100;
}

export function getStatistics(db: DB, now = Date.now()): Statistics {
  // One read transaction: the figures describe the same moment even while backups are being recorded.
  return db.transaction(() => {
    const inv = getInventoryCounts(db);
    const counters = getBackupCounters(db);
    const last24h = countOutcomesSince(db, now - DAY_MS);
    return {
      devices: { total: inv.devices, enabled: inv.devices_enabled, unreachable: inv.devices_unreachable },
      groups: inv.groups,
      credentials: inv.credentials,
      templates: inv.templates,
      backups: { total: counters.total, last_24h: last24h, running: counters.running },
      storage: {
        snapshot_files: counters.snapshot_files,
        bytes_stored: counters.bytes_stored,
        bytes_before_dedup: counters.bytes_before_dedup,
        dedup_ratio: dedupRatio(counters.bytes_before_dedup, counters.bytes_stored),
      },
    };
  })();
}

export interface DayPoint {
  /** Local date (YYYY-MM-DD) in the viewer's time zone. */
  day: string;
  succeeded: number;
  failed: number;
  changes: number;
}

export interface Dashboard {
  /** total: in service; retired apart. */
  devices: { total: number; enabled: number; unreachable: number; retired: number };
  /** Enabled devices with no successful backup since `staleBefore` (from when they were added), and with none ever; null unless asked. */
  stale: { stale: number; never: number } | null;
  last_24h: { succeeded: number; failed: number };
  days: DayPoint[];
  failures: FailureRow[];
  /** Storage and totals are appliance-wide; shown only to users whose scope is every group. */
  system: Statistics | null;
}

/**
 * The web dashboard for one user: device counts, outcomes and changes per day (in `tz`) over `days` days, and recent
 * failures, all limited to the scope, so a scoped user's figures never count a device they cannot list.
 */
export function getDashboard(db: DB, scope: Scope, tz: string, opts: { staleBefore?: number; now?: number; days?: number } = {}): Dashboard {
  const { now = Date.now(), days = 30 } = opts;
  const groups = scope.all ? null : [...scope.groupIds];
  const since = now - days * DAY_MS;
  const dayOf = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
  // Read before the transaction (a memo holds nothing inside one): these two tiles may be a write older than the rest.
  const stale =
    opts.staleBefore === undefined
      ? null
      : staleCounts.get(db, JSON.stringify({ groups, staleBefore: Math.floor(opts.staleBefore / 60_000) * 60_000 }), readStaleCounts);
  return db.transaction(() => {
    const points = new Map<string, DayPoint>();
    for (let t = since + DAY_MS; t <= now + 1; t += DAY_MS) {
      const day = dayOf.format(t);
      points.set(day, { day, succeeded: 0, failed: 0, changes: 0 });
    }
    const last24h = { succeeded: 0, failed: 0 };
    for (const b of listOutcomeBuckets(db, groups, since)) {
      const p = points.get(dayOf.format(b.bucket * OUTCOME_BUCKET_MS));
      if (p) {
        p.succeeded += b.succeeded;
        p.failed += b.failed;
      }
      if (b.bucket * OUTCOME_BUCKET_MS >= now - DAY_MS) {
        last24h.succeeded += b.succeeded;
        last24h.failed += b.failed;
      }
    }
    for (const b of listChangeBuckets(db, groups, since)) {
      const p = points.get(dayOf.format(b.bucket * CHANGE_BUCKET_MS));
      if (p) p.changes += b.n;
    }
    return {
      devices: countScopedDevices(db, groups),
      stale,
      last_24h: last24h,
      days: [...points.values()],
      failures: listRecentFailures(db, groups, now - 7 * DAY_MS, 10),
      system: scope.all ? getStatistics(db, now) : null,
    };
  })();
}

/** The appliance's figures as a door offers them (GET /stats): the reader's own dashboard.view (STATS_OPS). */
export function getStatisticsFor(db: DB, reader: Principal): Statistics {
  authorize(reader, STATS_OPS.dashboard);
  return getStatistics(db);
}
