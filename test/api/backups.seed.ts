// Seeding for the backup, statistics, docs and permission tests: an inventory and backups through the services; bulk backup rows for the scale tests.
import { randomBytes } from 'node:crypto';
import type { DB } from '../../src/db/open';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import type { AppServices } from '../../src/http/context';
import { recordReachability } from '../../src/features/backups/backup-engine.service';
import { rawState, seedCredential, seedDevice, seedGroup, seedTemplate } from '../helpers/seed';

export interface Inventory {
  credentialId: number;
  templateId: number;
  /** Group ids by name: A, A1 (under A), B. */
  groups: { A: number; A1: number; B: number };
  /** Device ids by name: dA (in A), dA1 (in A1), dB (in B), dNone (no group). */
  devices: { dA: number; dA1: number; dB: number; dNone: number };
}

let seq = 0;

/** A device made by the service; `reachability` as the reachability probe records it. */
export function seedInventoryDevice(
  db: DB,
  d: { name: string; credentialId: number; templateId: number; groupId?: number | null; enabled?: boolean; reachability?: 'reachable' | 'unreachable' },
): number {
  const id = seedDevice(db, {
    name: d.name,
    hostname: '192.0.2.1',
    credential_id: d.credentialId,
    template_id: d.templateId,
    group_id: d.groupId,
    enabled: d.enabled,
  });
  if (d.reachability) recordReachability(db, id, d.reachability, null);
  return id;
}

/** Groups A > A1 and B, one device in each and one in no group. */
export function seedInventory(db: DB): Inventory {
  const credentialId = seedCredential(db, null, {});
  const templateId = seedTemplate(db);
  const A = seedGroup(db, `A-${++seq}`);
  const A1 = seedGroup(db, `A1-${seq}`, A);
  const B = seedGroup(db, `B-${seq}`);
  const dev = (name: string, groupId: number | null) => seedInventoryDevice(db, { name: `${name}-${seq}`, credentialId, templateId, groupId });
  return { credentialId, templateId, groups: { A, A1, B }, devices: { dA: dev('dA', A), dA1: dev('dA1', A1), dB: dev('dB', B), dNone: dev('dNone', null) } };
}

export type Outcome = { text: string } | { error: string } | 'running';

/** Record one backup the way the engine does: startBackup, then finishBackupSync (snapshot first) unless it is still running. */
export function recordBackup(services: AppServices, deviceId: number, outcome: Outcome, startedAt = Date.now(), durationMs = 4000): string {
  const started = startBackup(services.db, deviceId, null, 'manual', startedAt);
  if (outcome === 'running') return started.id;
  const result =
    'text' in outcome
      ? { ok: true as const, text: outcome.text, ignorePatterns: [] }
      : { ok: false as const, failure: 'TIMEOUT' as const, message: outcome.error };
  finishBackupSync(services.db, services.snapshots, started, result, startedAt + durationMs);
  return started.id;
}

/**
 * Many records fast, for the performance tests: one INSERT … SELECT over a counter, one record per `stepMs`
 * going back from `newest`, devices interleaved. Ids are valid UUIDs that rise in insertion order (a random
 * prefix per call, then the counter), so the primary-key index is appended to rather than written at random
 * places: a million rows then take seconds, not minutes. The 0001/0002 triggers keep their counters as usual.
 */
export function bulkInsertBackups(
  db: DB,
  o: { deviceIds: number[]; perDevice: number; newest: number; stepMs: number; failEvery?: number; hash?: string | null; size?: number },
): void {
  rawState(
    db,
    'scale: thousands of backup records in one statement (the service writes a snapshot file for each)',
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @count),
          d(device_id, k) AS (SELECT value, key FROM json_each(@ids))
     INSERT INTO backups (id, device_id, trigger, started_at, finished_at, success, error_message, config_snapshot_hash, config_size, duration_ms)
     SELECT @prefix || '-' || substr(x, 1, 4) || '-4' || substr(x, 5, 3) || '-8' || substr(x, 8, 3) || '-' || printf('%012x', k),
            device_id, 'schedule', started_at, started_at + 4000, ok,
            CASE WHEN ok THEN NULL ELSE 'timed out' END, CASE WHEN ok THEN @hash END, CASE WHEN ok THEN @size END, 4000
       FROM (SELECT printf('%010x', n.i) AS x, d.k, d.device_id,
                    @newest - n.i * @step - d.k AS started_at,
                    CASE WHEN @fail > 0 AND (n.i * @devs + d.k) % @fail = 0 THEN 0 ELSE 1 END AS ok
               FROM n CROSS JOIN d)`, // CROSS JOIN keeps the counter the outer loop: rows arrive in id order
    {
      count: o.perDevice,
      ids: JSON.stringify(o.deviceIds),
      prefix: randomBytes(4).toString('hex'),
      newest: o.newest,
      step: o.stepMs,
      fail: o.failEvery ?? 0,
      devs: o.deviceIds.length,
      hash: o.hash ?? null,
      size: o.size ?? 1000,
    },
  );
}

/**
 * Run a large seeding transaction quickly: no fsync and a big page cache while it runs (test data only),
 * then the appliance's settings again and a checkpoint, so the timed requests do not read through a huge WAL.
 */
export function seedInBulk(db: DB, fill: () => void): void {
  const synchronous = Number(db.pragma('synchronous', { simple: true }));
  const cacheSize = Number(db.pragma('cache_size', { simple: true }));
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144'); // 256 MiB at most
  try {
    db.transaction(fill)();
  } finally {
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma(`cache_size = ${cacheSize}`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
}
