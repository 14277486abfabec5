// The collectors' Prometheus series, read from the database at scrape time: last contact, results delivered, zone queues.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DB } from '../../db/open';
import { listCollectorRows, workCountRows } from './collectors.store';

/** Registers the collector series on `registry` (once per registry). Revoked collectors are left out. */
export function registerCollectorMetrics(registry: Registry, db: DB): void {
  const registers = [registry];
  const active = () => listCollectorRows(db).filter((c) => c.revoked_at === null);
  new Gauge({
    name: 'confvault_collector_last_seen_seconds',
    help: 'When each enrolled collector last made an accepted request (Unix time, seconds); absent until its first request',
    labelNames: ['collector', 'zone'] as const,
    registers,
    collect() {
      this.reset();
      for (const c of active()) if (c.last_seen_at !== null) this.set({ collector: c.name, zone: c.zone }, Math.floor(c.last_seen_at / 1000));
    },
  });
  new Gauge({
    name: 'confvault_collector_queue',
    help: "Backups of each remote zone not yet stored: waiting for the zone's collector or leased to it",
    labelNames: ['zone'] as const,
    registers,
    collect() {
      this.reset();
      const zones = new Map(workCountRows(db).map((r) => [r.zone, r.queued + r.leased]));
      for (const c of active()) if (!zones.has(c.zone)) zones.set(c.zone, 0);
      for (const [zone, n] of zones) this.set({ zone }, n);
    },
  });
  new Counter({
    name: 'confvault_collector_results_total',
    help: 'Backup results each enrolled collector delivered and the central stored, since its enrolment',
    labelNames: ['collector'] as const,
    registers,
    collect() {
      this.reset();
      for (const c of active()) this.inc({ collector: c.name }, c.stored_total);
    },
  });
}
