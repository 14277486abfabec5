// Queries of remote collectors: collectors, enrolment tokens, zones of devices and groups, the zone work queue, results, nonces.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export interface CollectorRow {
  id: number;
  name: string;
  zone: string;
  signing_key: string;
  sealing_key: string;
  enrolled_at: number;
  last_seen_at: number | null;
  version: string | null;
  revoked_at: number | null;
  leased_total: number;
  stored_total: number;
}

export interface TokenRow {
  token_hash: string;
  zone: string;
  created_by: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  collector_id: number | null;
}

export interface WorkRow {
  device_id: number;
  zone: string;
  trigger: 'schedule' | 'manual' | 'cli' | 'api' | 'event';
  queued_at: number;
  lease_id: string | null;
  collector_id: number | null;
  lease_expires_at: number | null;
}

export function insertToken(db: DB, t: Omit<TokenRow, 'used_at' | 'collector_id'>): void {
  prepareCached(db, 'INSERT INTO collector_tokens (token_hash, zone, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(
    t.token_hash,
    t.zone,
    t.created_by,
    t.created_at,
    t.expires_at,
  );
}

export function getToken(db: DB, hash: string): TokenRow | undefined {
  return prepareCached(db, 'SELECT * FROM collector_tokens WHERE token_hash = ?').get(hash) as TokenRow | undefined;
}

/** Marks the token used by the collector; false when it was used meanwhile (single use). */
export function useToken(db: DB, hash: string, collectorId: number, at: number): boolean {
  return (
    prepareCached(db, 'UPDATE collector_tokens SET used_at = ?, collector_id = ? WHERE token_hash = ? AND used_at IS NULL').run(at, collectorId, hash)
      .changes === 1
  );
}

export function insertCollector(db: DB, c: Pick<CollectorRow, 'name' | 'zone' | 'signing_key' | 'sealing_key' | 'enrolled_at' | 'version'>): number {
  return Number(
    prepareCached(db, 'INSERT INTO collectors (name, zone, signing_key, sealing_key, enrolled_at, last_seen_at, version) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      c.name,
      c.zone,
      c.signing_key,
      c.sealing_key,
      c.enrolled_at,
      c.enrolled_at,
      c.version,
    ).lastInsertRowid,
  );
}

export function getCollectorRow(db: DB, id: number): CollectorRow | undefined {
  return prepareCached(db, 'SELECT * FROM collectors WHERE id = ?').get(id) as CollectorRow | undefined;
}

export function getCollectorByName(db: DB, name: string): CollectorRow | undefined {
  return prepareCached(db, 'SELECT * FROM collectors WHERE name = ?').get(name) as CollectorRow | undefined;
}

export function listCollectorRows(db: DB): CollectorRow[] {
  return prepareCached(db, 'SELECT * FROM collectors ORDER BY zone, name').all() as CollectorRow[];
}

export function revokeCollectorRow(db: DB, id: number, at: number): boolean {
  return prepareCached(db, 'UPDATE collectors SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes === 1;
}

export function touchCollector(db: DB, id: number, version: string | null, at: number): void {
  prepareCached(db, 'UPDATE collectors SET last_seen_at = ?, version = coalesce(?, version) WHERE id = ?').run(at, version, id);
}

/** Remembers a nonce; false when it was seen already (a replay). Nonces older than `before` are dropped first. */
export function rememberNonce(db: DB, collectorId: number, nonce: string, at: number, before: number): boolean {
  prepareCached(db, 'DELETE FROM collector_nonces WHERE seen_at < ?').run(before);
  return prepareCached(db, 'INSERT OR IGNORE INTO collector_nonces (collector_id, nonce, seen_at) VALUES (?, ?, ?)').run(collectorId, nonce, at).changes === 1;
}

export function setDeviceZoneRow(db: DB, deviceId: number, zone: string | null): boolean {
  return prepareCached(db, 'UPDATE devices SET zone = ? WHERE id = ?').run(zone, deviceId).changes === 1;
}

export function setGroupZoneRow(db: DB, groupId: number, zone: string | null): boolean {
  return prepareCached(db, 'UPDATE device_groups SET zone = ? WHERE id = ?').run(zone, groupId).changes === 1;
}

/** Each given device's effective zone (its own, else its nearest group's up the tree); devices of the central are left out. */
export function effectiveZoneRows(db: DB, deviceIds: readonly number[]): { device_id: number; zone: string }[] {
  return prepareCached(
    db,
    `WITH RECURSIVE up(device_id, group_id, zone, depth) AS (
       SELECT d.id, d.group_id, d.zone, 0 FROM devices d WHERE d.id IN (SELECT value FROM json_each(?))
       UNION ALL
       SELECT up.device_id, g.parent_id, g.zone, up.depth + 1 FROM up JOIN device_groups g ON g.id = up.group_id
        WHERE up.zone IS NULL AND up.depth < 64
     )
     SELECT device_id, zone FROM up WHERE zone IS NOT NULL`,
  ).all(JSON.stringify(deviceIds)) as { device_id: number; zone: string }[];
}

/** Every device of a remote zone (the whole inventory walked once): the central leaves them to their collectors. */
export function zonedDeviceIdRows(db: DB): number[] {
  return prepareCached(
    db,
    `WITH RECURSIVE gz(id, zone) AS (
       SELECT id, zone FROM device_groups WHERE parent_id IS NULL
       UNION ALL
       SELECT g.id, coalesce(g.zone, gz.zone) FROM device_groups g JOIN gz ON g.parent_id = gz.id
     )
     SELECT d.id FROM devices d LEFT JOIN gz ON gz.id = d.group_id WHERE coalesce(d.zone, gz.zone) IS NOT NULL`,
  )
    .pluck()
    .all() as number[];
}

/** Queues a device's backup for its zone; a device already queued or leased keeps its place. */
export function queueWorkRow(db: DB, deviceId: number, zone: string, trigger: WorkRow['trigger'], at: number): boolean {
  return (
    prepareCached(db, 'INSERT INTO collector_work (device_id, zone, trigger, queued_at) VALUES (?, ?, ?, ?) ON CONFLICT (device_id) DO NOTHING').run(
      deviceId,
      zone,
      trigger,
      at,
    ).changes === 1
  );
}

/** Run-out leases back to the queue: searched through collector_work_lease_expiry (schema 0031), not a read of the queue. */
export const EXPIRE_LEASES_SQL = 'UPDATE collector_work SET lease_id = NULL, collector_id = NULL, lease_expires_at = NULL WHERE lease_expires_at < ?';

/** Leases that ran out go back to the queue (the collector vanished); returns how many. */
export function expireLeaseRows(db: DB, at: number): number {
  return prepareCached(db, EXPIRE_LEASES_SQL).run(at).changes;
}

/** The collector's own leases it gives back unstarted (it is stopping): queued again at once, not when they run out. */
export function releaseLeaseRows(db: DB, collectorId: number, leaseIds: readonly string[]): number {
  const release = prepareCached(
    db,
    'UPDATE collector_work SET lease_id = NULL, collector_id = NULL, lease_expires_at = NULL WHERE lease_id = ? AND collector_id = ?',
  );
  let n = 0;
  for (const id of leaseIds) n += release.run(id, collectorId).changes;
  return n;
}

/** Extends the collector's own leases that it says it still holds (running, waiting or unsent): a live job never expires. */
export function renewLeaseRows(db: DB, collectorId: number, leaseIds: readonly string[], expiresAt: number): number {
  // One statement per lease: each finds its row through the lease_id index (an IN over json_each scanned the queue).
  const renew = prepareCached(db, 'UPDATE collector_work SET lease_expires_at = ? WHERE lease_id = ? AND collector_id = ?');
  let n = 0;
  for (const id of leaseIds) n += renew.run(expiresAt, id, collectorId).changes;
  return n;
}

/** Whether the zone has a backup to lease: queued, or leased and run out (a held lease request looks at this). */
export function hasLeasableWorkRow(db: DB, zone: string, at: number): boolean {
  return (
    prepareCached(db, 'SELECT 1 FROM collector_work WHERE zone = ? AND (lease_id IS NULL OR lease_expires_at < ?) LIMIT 1').pluck().get(zone, at) !== undefined
  );
}

/** The zone's oldest queued devices, up to `limit`. */
export function queuedWorkRows(db: DB, zone: string, limit: number): WorkRow[] {
  return prepareCached(db, 'SELECT * FROM collector_work WHERE zone = ? AND lease_id IS NULL ORDER BY queued_at, device_id LIMIT ?').all(
    zone,
    limit,
  ) as WorkRow[];
}

export function leaseWorkRow(db: DB, deviceId: number, leaseId: string, collectorId: number, expiresAt: number): boolean {
  return (
    prepareCached(db, 'UPDATE collector_work SET lease_id = ?, collector_id = ?, lease_expires_at = ? WHERE device_id = ? AND lease_id IS NULL').run(
      leaseId,
      collectorId,
      expiresAt,
      deviceId,
    ).changes === 1
  );
}

export function getWorkByLease(db: DB, leaseId: string): WorkRow | undefined {
  return prepareCached(db, 'SELECT * FROM collector_work WHERE lease_id = ?').get(leaseId) as WorkRow | undefined;
}

/** The device's place in its zone's queue (queued or leased), if it has one. */
export function getWorkByDevice(db: DB, deviceId: number): WorkRow | undefined {
  return prepareCached(db, 'SELECT * FROM collector_work WHERE device_id = ?').get(deviceId) as WorkRow | undefined;
}

export function deleteWorkByLease(db: DB, leaseId: string): void {
  prepareCached(db, 'DELETE FROM collector_work WHERE lease_id = ?').run(leaseId);
}

export function countLeases(db: DB, collectorId: number, n: number): void {
  prepareCached(db, 'UPDATE collectors SET leased_total = leased_total + ? WHERE id = ?').run(n, collectorId);
}

/** Forgets a lease's result row (its result was not stored after all), and the collector's count with it. */
export function deleteResultRow(db: DB, leaseId: string): void {
  const row = getResultRow(db, leaseId);
  if (!row) return;
  prepareCached(db, 'DELETE FROM collector_results WHERE lease_id = ?').run(leaseId);
  prepareCached(db, 'UPDATE collectors SET stored_total = stored_total - 1 WHERE id = ?').run(row.collector_id);
}

export function getResultRow(db: DB, leaseId: string): { lease_id: string; collector_id: number; backup_id: string } | undefined {
  return prepareCached(db, 'SELECT lease_id, collector_id, backup_id FROM collector_results WHERE lease_id = ?').get(leaseId) as
    { lease_id: string; collector_id: number; backup_id: string } | undefined;
}

export function insertResultRow(db: DB, r: { lease_id: string; collector_id: number; device_id: number; backup_id: string; received_at: number }): void {
  prepareCached(db, 'INSERT INTO collector_results (lease_id, collector_id, device_id, backup_id, received_at) VALUES (?, ?, ?, ?, ?)').run(
    r.lease_id,
    r.collector_id,
    r.device_id,
    r.backup_id,
    r.received_at,
  );
  prepareCached(db, 'UPDATE collectors SET stored_total = stored_total + 1 WHERE id = ?').run(r.collector_id);
}

/** Queue depth per zone (queued and leased), for the collectors list. */
export function workCountRows(db: DB): { zone: string; queued: number; leased: number }[] {
  return prepareCached(
    db,
    'SELECT zone, sum(lease_id IS NULL) AS queued, sum(lease_id IS NOT NULL) AS leased FROM collector_work GROUP BY zone ORDER BY zone',
  ).all() as { zone: string; queued: number; leased: number }[];
}

export function getDeviceIdByName(db: DB, name: string): number | undefined {
  return prepareCached(db, 'SELECT id FROM devices WHERE name = ?').pluck().get(name) as number | undefined;
}

/** Results each collector delivered since `since` (the collectors list's "last hour"). */
export function recentResultCountRows(db: DB, since: number): { collector_id: number; n: number }[] {
  return prepareCached(db, 'SELECT collector_id, count(*) AS n FROM collector_results WHERE received_at >= ? GROUP BY collector_id').all(since) as {
    collector_id: number;
    n: number;
  }[];
}

/** Enrolment tokens, newest first, one page (the API's and the CLI's token list; the hash stays in the store). */
export function listTokenRows(db: DB, offset: number, limit: number): TokenRow[] {
  return prepareCached(db, 'SELECT * FROM collector_tokens ORDER BY created_at DESC, token_hash LIMIT ? OFFSET ?').all(limit, offset) as TokenRow[];
}

export function countTokenRows(db: DB): number {
  return prepareCached(db, 'SELECT count(*) FROM collector_tokens').pluck().get() as number;
}

/** The token whose hash starts with `prefix` (its public id: 16 hex digits), read through the primary key. */
export function getTokenByPrefix(db: DB, prefix: string): TokenRow | undefined {
  return prepareCached(db, "SELECT * FROM collector_tokens WHERE token_hash >= ? AND token_hash < ? || 'g' LIMIT 1").get(prefix, prefix) as
    TokenRow | undefined;
}

/** Deletes a token not used yet; false when it was used (or is gone). */
export function deleteUnusedTokenRow(db: DB, hash: string): boolean {
  return prepareCached(db, 'DELETE FROM collector_tokens WHERE token_hash = ? AND used_at IS NULL').run(hash).changes === 1;
}

export function setCollectorZoneRow(db: DB, id: number, zone: string): boolean {
  return prepareCached(db, 'UPDATE collectors SET zone = ? WHERE id = ?').run(zone, id).changes === 1;
}

export function getDeviceZoneRow(db: DB, deviceId: number): string | null | undefined {
  const row = prepareCached(db, 'SELECT zone FROM devices WHERE id = ?').get(deviceId) as { zone: string | null } | undefined;
  return row?.zone;
}

export function getGroupZoneRow(db: DB, groupId: number): string | null | undefined {
  const row = prepareCached(db, 'SELECT zone FROM device_groups WHERE id = ?').get(groupId) as { zone: string | null } | undefined;
  return row?.zone;
}
