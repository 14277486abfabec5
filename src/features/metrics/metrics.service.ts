// Prometheus metrics of one appliance: process counters (backups, HTTP requests) and gauges read from the database at scrape time.
import path from 'node:path';
import { freeBytes } from '../maintenance/storage-health';
import { statSync } from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DB } from '../../db/open';
import { createRequestMetrics } from './request-metrics';
import { countViolations } from '../compliance/compliance.service';
import { mirrorMetrics } from '../gitmirror/gitmirror.store';
import { replicationHealth } from '../replication/replication.service';
import { registerCollectorMetrics } from '../collectors/collectors.metrics';
import { countDeliveriesByStatus, countDevicesByState, countRunningBackups, countStaleDevices, readStorageCounts } from './metrics.store';

/** What the metrics need to know of a finished device backup (the runner's result has these fields). */
export interface BackupObservation {
  trigger: string;
  success: boolean;
  changed: boolean;
  /** A failure type from a fixed list (engine/types.ts), or "SKIPPED"; never free text. */
  failure: string | null;
  durationMs: number;
}

export interface MetricsSources {
  db: DB;
  /** The database file, for its size on disk with its write-ahead log. */
  dbFile: string;
  staleAfterHours: number;
  /** Backups waiting in this process's runner for a free worker. */
  queued: () => number;
  /** [replication] enabled: the replication gauges are reported. */
  replication?: boolean;
}

/** What /metrics reads of the syslog receiver at scrape time. */
export interface SyslogMetricsSource {
  messages: () => { udp: number; tcp: number };
  /** Datagrams the kernel dropped on the UDP socket (receive buffer full); null where the system does not say. */
  udpDrops: (() => number) | null;
  udpReceiveBufferBytes: number;
}

export interface ApplianceMetrics {
  registry: Registry;
  /** Registers the syslog receiver's gauges (once per registry; serve starts one receiver). */
  watchSyslog(src: SyslogMetricsSource): void;
  observeBackup(o: BackupObservation): void;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
}

/** The result label of a backup: a small fixed set. */
export function backupResult(o: BackupObservation): 'changed' | 'unchanged' | 'failed' | 'skipped' {
  if (o.failure === 'SKIPPED') return 'skipped';
  if (!o.success) return 'failed';
  return o.changed ? 'changed' : 'unchanged';
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * One registry per appliance (tests run several in one process; prom-client's global registry would mix them).
 * Labels hold only values from fixed sets or route patterns: never a device name, an address or configuration text.
 */
export function createApplianceMetrics(src: MetricsSources): ApplianceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'confvault_' });
  const registers = [registry];

  const backups = new Counter({
    name: 'confvault_backups_total',
    help: 'Device backups finished by this server process, by result (changed, unchanged, failed, skipped) and trigger',
    labelNames: ['result', 'trigger'] as const,
    registers,
  });
  const failures = new Counter({
    name: 'confvault_backup_failures_total',
    help: 'Failed device backups by failure type (CONNECTION_REFUSED, AUTH_FAILED, ...)',
    labelNames: ['failure_type'] as const,
    registers,
  });
  const durations = new Histogram({
    name: 'confvault_backup_duration_seconds',
    help: 'Time from start to recorded result of a device backup, retries included',
    labelNames: ['trigger'] as const,
    buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  });
  const observeRequest = createRequestMetrics(registry);
  registerCollectorMetrics(registry, src.db);

  new Gauge({
    name: 'confvault_devices',
    help: 'Devices by state: reachable, unreachable, unknown (last contact), enabled, disabled, held (backups held until a credential holder approves)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const d = countDevicesByState(src.db);
      for (const state of ['reachable', 'unreachable', 'unknown', 'enabled', 'disabled', 'held'] as const) this.set({ state }, d[state]);
    },
  });
  new Gauge({
    name: 'confvault_replication_lag_seconds',
    help: 'Seconds of committed changes the replica may lack (0 when current); absent while [replication] is off or before the first copy',
    registers,
    collect() {
      this.reset();
      const lag = replicationHealth(path.dirname(src.dbFile), src.replication === true)?.lag_seconds;
      if (lag !== undefined && lag !== null) this.set(lag);
    },
  });
  new Gauge({
    name: 'confvault_replication_failing',
    help: '1 when the last replication pass failed (`confvault db replica status` says why), 0 otherwise; absent while [replication] is off',
    registers,
    collect() {
      this.reset();
      const h = replicationHealth(path.dirname(src.dbFile), src.replication === true);
      if (h) this.set(h.status === 'failing' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'confvault_devices_stale',
    help: 'Enabled devices without a successful backup for [backup] stale_after_hours',
    registers,
    collect() {
      this.set(countStaleDevices(src.db, Date.now() - src.staleAfterHours * 3_600_000));
    },
  });
  new Gauge({
    name: 'confvault_backup_queue',
    help: 'Device backups running (records of every process, CLI runs included) and queued in this server process',
    labelNames: ['state'] as const,
    registers,
    collect() {
      this.set({ state: 'running' }, countRunningBackups(src.db));
      this.set({ state: 'queued' }, src.queued());
    },
  });
  new Gauge({
    name: 'confvault_git_mirror_versions',
    help: 'Git mirror: versions committed, waiting in the queue, and not queued because it was full (a backfill writes them)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const m = mirrorMetrics(src.db);
      for (const state of ['committed', 'pending', 'overflowed'] as const) this.set({ state }, m[state]);
    },
  });
  new Gauge({
    name: 'confvault_git_mirror_push_failures',
    help: 'Git mirror pushes that failed, over all remotes since each was configured: rejected (the remote refused, e.g. non-fast-forward) or unreachable',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      const m = mirrorMetrics(src.db);
      this.set({ kind: 'rejected' }, m.rejected);
      this.set({ kind: 'unreachable' }, m.unreachable);
    },
  });
  new Gauge({
    name: 'confvault_git_mirror_remotes_rejecting',
    help: 'Git mirror remotes whose last push was rejected (they get nothing until the remote is fixed; never force-pushed)',
    registers,
    collect() {
      this.set(mirrorMetrics(src.db).rejectedNow);
    },
  });
  new Gauge({
    name: 'confvault_notification_deliveries',
    help: 'Notification deliveries on record by status (pending, sent, dead)',
    labelNames: ['status'] as const,
    registers,
    collect() {
      for (const [status, n] of Object.entries(countDeliveriesByStatus(src.db))) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'confvault_compliance_violations',
    help: "Failing compliance rules on the devices' newest versions (waived ones left out), by rule and severity",
    labelNames: ['rule', 'severity'] as const,
    registers,
    collect() {
      this.reset();
      for (const v of countViolations(src.db, path.dirname(src.dbFile))) this.set({ rule: v.rule_id, severity: v.severity }, v.n);
    },
  });
  new Gauge({
    name: 'confvault_database_bytes',
    help: 'Database size: "file" the main file and its write-ahead log on disk, "used" the pages in use',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      const s = readStorageCounts(src.db);
      this.set({ kind: 'file' }, fileSize(src.dbFile) + fileSize(`${src.dbFile}-wal`));
      this.set({ kind: 'used' }, (s.db_pages - s.db_freelist_pages) * s.db_page_size);
    },
  });
  new Gauge({
    name: 'confvault_snapshot_bytes',
    help: 'Bytes of configuration snapshot files stored (after compression and deduplication)',
    registers,
    collect() {
      this.set(readStorageCounts(src.db).snapshot_bytes);
    },
  });
  new Gauge({
    name: 'confvault_snapshot_files',
    help: 'Configuration snapshot files stored (one per distinct configuration text)',
    registers,
    collect() {
      this.set(readStorageCounts(src.db).snapshot_files);
    },
  });

  new Gauge({
    name: 'confvault_data_dir_free_bytes',
    help: 'Bytes free to the appliance on the file system of the data dir (database and snapshots)',
    registers,
    collect() {
      const free = freeBytes(path.dirname(src.dbFile));
      if (free !== null) this.set(free);
    },
  });

  let syslogWatched = false;
  return {
    registry,
    watchSyslog(syslog) {
      if (syslogWatched) return;
      syslogWatched = true;
      new Gauge({
        name: 'confvault_syslog_messages',
        help: 'Syslog messages received since the receiver started, by transport (udp, tcp)',
        labelNames: ['transport'] as const,
        registers,
        collect() {
          const m = syslog.messages();
          this.set({ transport: 'udp' }, m.udp);
          this.set({ transport: 'tcp' }, m.tcp);
        },
      });
      const drops = syslog.udpDrops;
      if (drops) {
        new Gauge({
          name: 'confvault_syslog_udp_dropped',
          help: "Syslog datagrams the kernel dropped since the receiver started because its receive buffer was full (the socket's drops in /proc/net/udp; see [events] udp_receive_buffer_kb)",
          registers,
          collect() {
            this.set(drops());
          },
        });
      }
      new Gauge({
        name: 'confvault_syslog_udp_receive_buffer_bytes',
        help: 'Receive buffer of the syslog UDP socket as the kernel reports it (Linux: twice the granted size)',
        registers,
        collect() {
          this.set(syslog.udpReceiveBufferBytes);
        },
      });
    },
    observeBackup(o) {
      const trigger = o.trigger;
      backups.inc({ result: backupResult(o), trigger });
      if (o.failure && o.failure !== 'SKIPPED') failures.inc({ failure_type: o.failure });
      if (o.failure !== 'SKIPPED') durations.observe({ trigger }, o.durationMs / 1000);
    },
    observeRequest,
  };
}

// The metrics of each open database: the composition root creates them, the /metrics route and the runner find them.
const byDb = new WeakMap<DB, ApplianceMetrics>();

export function attachMetrics(src: MetricsSources): ApplianceMetrics {
  let m = byDb.get(src.db);
  if (!m) byDb.set(src.db, (m = createApplianceMetrics(src)));
  return m;
}

export function metricsOf(db: DB): ApplianceMetrics | undefined {
  return byDb.get(db);
}
