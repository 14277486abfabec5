// SQL of the notification tables: channels, rules, the outbox, deliveries, stale notices.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export type ChannelType = 'webhook' | 'slack' | 'teams' | 'email' | 'syslog';
export type DeliveryStatus = 'pending' | 'sent' | 'dead';

export interface ChannelRow {
  id: number;
  name: string;
  type: ChannelType;
  settings: string;
  secret_enc: Buffer | null;
  last_sent_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface RuleRow {
  id: number;
  name: string;
  events: string;
  include_diff: number;
  created_at: number;
  updated_at: number;
  channel_ids: string | null;
  group_ids: string | null;
}

export interface OutboxRow {
  id: number;
  channel_id: number;
  rule_id: number | null;
  event: string;
  device_id: number | null;
  include_diff: number;
  item: string;
  occurred_at: number;
  delivery_id: string | null;
}

export interface DeliveryRow {
  id: string;
  channel_id: number;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  event_count: number;
  body: string;
  created_at: number;
  sent_at: number | null;
}

export function insertChannel(db: DB, c: { name: string; type: ChannelType; settings: string; secret_enc: Buffer | null }, now = Date.now()): number {
  return Number(
    db
      .prepare('INSERT INTO notification_channels (name, type, settings, secret_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(c.name, c.type, c.settings, c.secret_enc, now, now).lastInsertRowid,
  );
}

/** Renames or retargets a channel; false when it is gone. Its rules, outbox and deliveries follow it (by id). */
export function updateChannelRow(db: DB, id: number, c: { name: string; settings: string; secret_enc: Buffer | null }, now = Date.now()): boolean {
  return (
    db
      .prepare('UPDATE notification_channels SET name = ?, settings = ?, secret_enc = ?, updated_at = ? WHERE id = ?')
      .run(c.name, c.settings, c.secret_enc, now, id).changes > 0
  );
}

export function listChannelRows(db: DB): ChannelRow[] {
  return db.prepare('SELECT * FROM notification_channels ORDER BY name').all() as ChannelRow[];
}

export function getChannelRow(db: DB, id: number): ChannelRow | undefined {
  return db.prepare('SELECT * FROM notification_channels WHERE id = ?').get(id) as ChannelRow | undefined;
}

export function getChannelByName(db: DB, name: string): ChannelRow | undefined {
  return db.prepare('SELECT * FROM notification_channels WHERE name = ?').get(name) as ChannelRow | undefined;
}

export function deleteChannelRow(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM notification_channels WHERE id = ?').run(id).changes > 0;
}

export function setChannelLastSent(db: DB, id: number, at: number): void {
  db.prepare('UPDATE notification_channels SET last_sent_at = ? WHERE id = ?').run(at, id);
}

const RULE_SELECT = `SELECT r.*,
  (SELECT json_group_array(channel_id) FROM notification_rule_channels WHERE rule_id = r.id) AS channel_ids,
  (SELECT json_group_array(group_id) FROM notification_rule_groups WHERE rule_id = r.id) AS group_ids
  FROM notification_rules r`;

export function listRuleRows(db: DB): RuleRow[] {
  return db.prepare(`${RULE_SELECT} ORDER BY r.name`).all() as RuleRow[];
}

export function getRuleByName(db: DB, name: string): RuleRow | undefined {
  return db.prepare(`${RULE_SELECT} WHERE r.name = ?`).get(name) as RuleRow | undefined;
}

export function getRuleRow(db: DB, id: number): RuleRow | undefined {
  return db.prepare(`${RULE_SELECT} WHERE r.id = ?`).get(id) as RuleRow | undefined;
}

export function insertRule(
  db: DB,
  r: { name: string; events: string[]; include_diff: boolean; channelIds: number[]; groupIds: number[] },
  now = Date.now(),
): number {
  const id = Number(
    db
      .prepare('INSERT INTO notification_rules (name, events, include_diff, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(r.name, JSON.stringify(r.events), r.include_diff ? 1 : 0, now, now).lastInsertRowid,
  );
  const ch = db.prepare('INSERT INTO notification_rule_channels (rule_id, channel_id) VALUES (?, ?)');
  for (const c of r.channelIds) ch.run(id, c);
  const gr = db.prepare('INSERT INTO notification_rule_groups (rule_id, group_id) VALUES (?, ?)');
  for (const g of r.groupIds) gr.run(id, g);
  return id;
}

/** Replaces what a rule sends and where (its name stays): events, include_diff, channels, groups. */
export function updateRuleRow(
  db: DB,
  id: number,
  r: { events: string[]; include_diff: boolean; channelIds: number[]; groupIds: number[] },
  now = Date.now(),
): void {
  db.prepare('UPDATE notification_rules SET events = ?, include_diff = ?, updated_at = ? WHERE id = ?').run(
    JSON.stringify(r.events),
    r.include_diff ? 1 : 0,
    now,
    id,
  );
  db.prepare('DELETE FROM notification_rule_channels WHERE rule_id = ?').run(id);
  db.prepare('DELETE FROM notification_rule_groups WHERE rule_id = ?').run(id);
  const ch = db.prepare('INSERT INTO notification_rule_channels (rule_id, channel_id) VALUES (?, ?)');
  for (const c of r.channelIds) ch.run(id, c);
  const gr = db.prepare('INSERT INTO notification_rule_groups (rule_id, group_id) VALUES (?, ?)');
  for (const g of r.groupIds) gr.run(id, g);
}

export function deleteRuleRow(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM notification_rules WHERE id = ?').run(id).changes > 0;
}

export function groupExists(db: DB, id: number): boolean {
  return db.prepare('SELECT 1 FROM device_groups WHERE id = ?').get(id) !== undefined;
}

/** The group and its ancestors, nearest first (a rule for a parent group covers its subgroups). */
export function groupAncestry(db: DB, groupId: number | null): { id: number; name: string }[] {
  if (groupId === null) return [];
  return db
    .prepare(
      `WITH RECURSIVE up(id, name, parent_id, depth) AS (
         SELECT id, name, parent_id, 0 FROM device_groups WHERE id = ?
         UNION ALL SELECT g.id, g.name, g.parent_id, up.depth + 1 FROM device_groups g JOIN up ON g.id = up.parent_id WHERE up.depth < 64)
       SELECT id, name FROM up ORDER BY depth`,
    )
    .all(groupId) as { id: number; name: string }[];
}

export function insertOutbox(db: DB, o: Omit<OutboxRow, 'id' | 'delivery_id'>): void {
  db.prepare('INSERT INTO notification_outbox (channel_id, rule_id, event, device_id, include_diff, item, occurred_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    o.channel_id,
    o.rule_id,
    o.event,
    o.device_id,
    o.include_diff,
    o.item,
    o.occurred_at,
  );
}

/** Channels with outbox rows no delivery has taken yet. */
export function channelsWithWaitingEvents(db: DB): number[] {
  return db.prepare('SELECT DISTINCT channel_id FROM notification_outbox WHERE delivery_id IS NULL').pluck().all() as number[];
}

export function waitingOutbox(db: DB, channelId: number, limit: number): OutboxRow[] {
  return db.prepare('SELECT * FROM notification_outbox WHERE channel_id = ? AND delivery_id IS NULL ORDER BY id LIMIT ?').all(channelId, limit) as OutboxRow[];
}

export function assignOutbox(db: DB, ids: number[], deliveryId: string): void {
  const st = db.prepare('UPDATE notification_outbox SET delivery_id = ? WHERE id = ?');
  for (const id of ids) st.run(deliveryId, id);
}

export function insertDelivery(db: DB, d: Omit<DeliveryRow, 'attempts' | 'last_error' | 'sent_at'>): void {
  db.prepare(
    `INSERT INTO notification_deliveries (id, channel_id, status, attempts, next_attempt_at, event_count, body, created_at)
     VALUES (?, ?, ?, 0, ?, ?, ?, ?)`,
  ).run(d.id, d.channel_id, d.status, d.next_attempt_at, d.event_count, d.body, d.created_at);
}

export function pendingDeliveryOf(db: DB, channelId: number): DeliveryRow | undefined {
  return db.prepare("SELECT * FROM notification_deliveries WHERE channel_id = ? AND status = 'pending' ORDER BY created_at LIMIT 1").get(channelId) as
    DeliveryRow | undefined;
}

export function dueDeliveries(db: DB, now: number, limit: number): DeliveryRow[] {
  return db
    .prepare("SELECT * FROM notification_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?")
    .all(now, limit) as DeliveryRow[];
}

export function updateDeliveryAttempt(
  db: DB,
  id: string,
  u: { status: DeliveryStatus; attempts: number; next_attempt_at: number; last_error: string | null; sent_at: number | null },
): void {
  db.prepare('UPDATE notification_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, sent_at = ? WHERE id = ?').run(
    u.status,
    u.attempts,
    u.next_attempt_at,
    u.last_error,
    u.sent_at,
    id,
  );
}

export function listDeliveryRows(db: DB, channelId: number | null, limit: number): DeliveryRow[] {
  if (channelId === null) return db.prepare('SELECT * FROM notification_deliveries ORDER BY created_at DESC LIMIT ?').all(limit) as DeliveryRow[];
  return db.prepare('SELECT * FROM notification_deliveries WHERE channel_id = ? ORDER BY created_at DESC LIMIT ?').all(channelId, limit) as DeliveryRow[];
}

/** Enabled devices whose newest successful backup (or, with none, their creation) is older than `before`. */
export function staleDeviceIds(db: DB, before: number): number[] {
  return db
    .prepare(
      `SELECT d.id FROM devices d WHERE d.enabled = 1
         AND COALESCE((SELECT MAX(b.finished_at) FROM backups b WHERE b.device_id = d.id AND b.success = 1), d.created_at) < ?
       ORDER BY d.id`,
    )
    .pluck()
    .all(before) as number[];
}

export function lastSuccessAt(db: DB, deviceId: number): number | null {
  return (db.prepare('SELECT MAX(finished_at) FROM backups WHERE device_id = ? AND success = 1').pluck().get(deviceId) as number | null) ?? null;
}

export function isStaleNoticed(db: DB, deviceId: number): boolean {
  return db.prepare('SELECT 1 FROM device_stale_notices WHERE device_id = ?').get(deviceId) !== undefined;
}

export function putStaleNotice(db: DB, deviceId: number, at: number): void {
  db.prepare('INSERT OR IGNORE INTO device_stale_notices (device_id, noticed_at) VALUES (?, ?)').run(deviceId, at);
}

export function clearStaleNotice(db: DB, deviceId: number): void {
  prepareCached(db, 'DELETE FROM device_stale_notices WHERE device_id = ?').run(deviceId);
}

export interface DeviceFacts {
  id: number;
  name: string;
  hostname: string;
  group_id: number | null;
}

export function getDeviceFacts(db: DB, id: number): DeviceFacts | undefined {
  return db.prepare('SELECT id, name, hostname, group_id FROM devices WHERE id = ?').get(id) as DeviceFacts | undefined;
}

export function backupChangedBy(db: DB, backupId: string): string | null {
  return (db.prepare('SELECT changed_by FROM backups WHERE id = ?').pluck().get(backupId) as string | null | undefined) ?? null;
}

export function previousSuccessfulHash(db: DB, deviceId: number, backupId: string): string | null {
  return (
    (db
      .prepare(
        `SELECT config_snapshot_hash FROM backups WHERE device_id = ? AND success = 1 AND id <> ? AND config_snapshot_hash IS NOT NULL
         ORDER BY finished_at DESC LIMIT 1`,
      )
      .pluck()
      .get(deviceId, backupId) as string | undefined) ?? null
  );
}

export function getDeliveryRow(db: DB, id: string): DeliveryRow | undefined {
  return db.prepare('SELECT * FROM notification_deliveries WHERE id = ?').get(id) as DeliveryRow | undefined;
}

export interface FinishedBackupFacts {
  id: string;
  device_id: number;
  template_id: number | null;
  trigger: string;
  success: number;
  failure_type: string | null;
  error_message: string | null;
  changed: number;
  config_snapshot_hash: string | null;
}

export function getFinishedBackupFacts(db: DB, id: string): FinishedBackupFacts | undefined {
  return prepareCached(
    db,
    'SELECT id, device_id, template_id, trigger, success, failure_type, error_message, changed, config_snapshot_hash FROM backups WHERE id = ?',
  ).get(id) as FinishedBackupFacts | undefined;
}

export function getDeviceReachability(db: DB, id: number): string | null {
  return (prepareCached(db, 'SELECT reachability FROM devices WHERE id = ?').get(id) as { reachability: string | null } | undefined)?.reachability ?? null;
}

/** Of these devices, the stale ones (enabled, no successful backup since `before`, or never and created before it). */
export function staleAmong(db: DB, ids: number[], before: number): Set<number> {
  if (!ids.length) return new Set();
  const rows = db
    .prepare(
      `SELECT d.id FROM devices d WHERE d.id IN (SELECT value FROM json_each(?)) AND d.enabled = 1
         AND COALESCE((SELECT MAX(b.finished_at) FROM backups b WHERE b.device_id = d.id AND b.success = 1), d.created_at) < ?`,
    )
    .pluck()
    .all(JSON.stringify(ids), before) as number[];
  return new Set(rows);
}

/** Delete finished deliveries (sent or dead) created before `before`, with their outbox rows; returns how many. */
export function pruneDeliveries(db: DB, before: number): number {
  return db.prepare("DELETE FROM notification_deliveries WHERE status <> 'pending' AND created_at < ?").run(before).changes;
}

export function anyRule(db: DB): boolean {
  return prepareCached(db, 'SELECT 1 FROM notification_rules LIMIT 1').get() !== undefined;
}
