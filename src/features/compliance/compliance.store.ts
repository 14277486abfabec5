// Compliance queries (schema/0019): rules kept in the database, packs per group, judged versions and their results, waivers, re-judge runs.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export interface RuleRow {
  id: string;
  definition: string;
  created_at: number;
  updated_at: number;
}

export function listRuleRows(db: DB): RuleRow[] {
  return prepareCached(db, 'SELECT * FROM compliance_rules ORDER BY id').all() as RuleRow[];
}

/** A value that changes whenever a database rule is added, changed or removed. */
export function ruleRowsStamp(db: DB): string {
  const r = prepareCached(db, "SELECT count(*) AS n, ifnull(max(updated_at), 0) AS at, ifnull(group_concat(id), '') AS ids FROM compliance_rules").get() as {
    n: number;
    at: number;
    ids: string;
  };
  return `${r.n}:${r.at}:${r.ids}`;
}

export function upsertRuleRow(db: DB, id: string, definition: string, now: number): 'created' | 'updated' {
  const existed = prepareCached(db, 'SELECT 1 FROM compliance_rules WHERE id = ?').get(id) !== undefined;
  prepareCached(
    db,
    `INSERT INTO compliance_rules (id, definition, created_at, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at`,
  ).run(id, definition, now, now);
  return existed ? 'updated' : 'created';
}

export function deleteRuleRow(db: DB, id: string): boolean {
  return prepareCached(db, 'DELETE FROM compliance_rules WHERE id = ?').run(id).changes > 0;
}

export interface PackGroupRow {
  pack: string;
  group_id: number | null;
}

export function listPackGroupRows(db: DB): PackGroupRow[] {
  return prepareCached(db, 'SELECT pack, group_id FROM compliance_pack_groups ORDER BY pack, group_id').all() as PackGroupRow[];
}

export function insertPackGroup(db: DB, pack: string, groupId: number | null, now: number): boolean {
  return prepareCached(db, 'INSERT OR IGNORE INTO compliance_pack_groups (pack, group_id, enabled_at) VALUES (?, ?, ?)').run(pack, groupId, now).changes > 0;
}

export function deletePackGroups(db: DB, pack: string, groupId: number | null | undefined): number {
  if (groupId === undefined) return prepareCached(db, 'DELETE FROM compliance_pack_groups WHERE pack = ?').run(pack).changes;
  return prepareCached(db, 'DELETE FROM compliance_pack_groups WHERE pack = ? AND ifnull(group_id, 0) = ifnull(?, 0)').run(pack, groupId).changes;
}

export function findDeviceIdByName(db: DB, name: string): number | undefined {
  return (prepareCached(db, 'SELECT id FROM devices WHERE name = ?').get(name) as { id: number } | undefined)?.id;
}

export interface GroupRow {
  id: number;
  name: string;
  parent_id: number | null;
}

export function listGroupRows(db: DB): GroupRow[] {
  return prepareCached(db, 'SELECT id, name, parent_id FROM device_groups').all() as GroupRow[];
}

/** A device and the stored version to judge: its newest successful one, or the one named. */
export interface VersionRow {
  device_id: number;
  device_name: string;
  hostname: string;
  group_id: number | null;
  template: string | null;
  backup_id: string;
  config_snapshot_hash: string;
  started_at: number;
  ruleset: string | null;
  /** JSON list of the rules the version passed (null: not judged). */
  passed_rules: string | null;
}

const VERSION_COLUMNS = `d.id AS device_id, d.name AS device_name, d.hostname, d.group_id, t.name AS template,
  b.id AS backup_id, b.config_snapshot_hash, b.started_at, j.ruleset, j.passed_rules`;

export function getVersionRow(db: DB, backupId: string): VersionRow | undefined {
  return prepareCached(
    db,
    `SELECT ${VERSION_COLUMNS} FROM backups b JOIN devices d ON d.id = b.device_id LEFT JOIN templates t ON t.id = d.template_id
       LEFT JOIN compliance_judged j ON j.backup_id = b.id
      WHERE b.id = ? AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL`,
  ).get(backupId) as VersionRow | undefined;
}

/** Each device's newest successful version (devices with none are left out), in device name order. */
export function listLatestVersionRows(db: DB, deviceIds: readonly number[] | null): VersionRow[] {
  const filter = deviceIds === null ? '' : 'WHERE d.id IN (SELECT value FROM json_each(?))';
  return db
    .prepare(
      `SELECT ${VERSION_COLUMNS}
         FROM (SELECT d.id AS device_id,
                      (SELECT b.id FROM backups b WHERE b.device_id = d.id AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL
                        ORDER BY b.started_at DESC, b.id DESC LIMIT 1) AS backup_id
                 FROM devices d ${filter}) x
         JOIN backups b ON b.id = x.backup_id
         JOIN devices d ON d.id = x.device_id
         LEFT JOIN templates t ON t.id = d.template_id
         LEFT JOIN compliance_judged j ON j.backup_id = b.id
        ORDER BY d.name`,
    )
    .all(...(deviceIds === null ? [] : [JSON.stringify(deviceIds)])) as VersionRow[];
}

export interface ResultInput {
  rule_id: string;
  status: 'pass' | 'fail';
  failing: string;
  remediation: string;
}

/** A version's judgement, replacing an earlier one (after a rule change): the passed rules as a list, a row per failure. Inside the caller's transaction. */
export function saveJudgement(
  db: DB,
  j: { backup_id: string; device_id: number; ruleset: string; judged_at: number; replace: boolean },
  results: readonly ResultInput[],
): void {
  if (j.replace) prepareCached(db, 'DELETE FROM compliance_judged WHERE backup_id = ?').run(j.backup_id);
  const failures = results.filter((r) => r.status === 'fail');
  const passed = results.filter((r) => r.status === 'pass').map((r) => r.rule_id);
  const id = prepareCached(db, 'INSERT INTO compliance_judged (backup_id, device_id, ruleset, judged_at, passed_rules, failed) VALUES (?, ?, ?, ?, ?, ?)').run(
    j.backup_id,
    j.device_id,
    j.ruleset,
    j.judged_at,
    JSON.stringify(passed),
    failures.length,
  ).lastInsertRowid;
  const insert = prepareCached(db, 'INSERT INTO compliance_results (judged_id, rule_id, failing, remediation) VALUES (?, ?, ?, ?)');
  for (const r of failures) insert.run(id, r.rule_id, r.failing, r.remediation);
}

export interface ResultRow {
  backup_id: string;
  rule_id: string;
  failing: string;
  remediation: string;
}

export function listResultRows(db: DB, backupIds: readonly string[]): ResultRow[] {
  return db
    .prepare(
      `SELECT j.backup_id, r.rule_id, r.failing, r.remediation FROM compliance_judged j JOIN compliance_results r ON r.judged_id = j.id
        WHERE j.backup_id IN (SELECT value FROM json_each(?)) ORDER BY j.backup_id, r.rule_id`,
    )
    .all(JSON.stringify(backupIds)) as ResultRow[];
}

export interface WaiverRow {
  id: number;
  device_id: number;
  rule_id: string;
  reason: string;
  owner: string;
  expires_at: number;
  created_by: string;
  created_at: number;
}

export function insertWaiver(db: DB, w: Omit<WaiverRow, 'id'>): number {
  return Number(
    prepareCached(
      db,
      'INSERT INTO compliance_waivers (device_id, rule_id, reason, owner, expires_at, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(w.device_id, w.rule_id, w.reason, w.owner, w.expires_at, w.created_by, w.created_at).lastInsertRowid,
  );
}

export function listActiveWaiverRows(db: DB, now: number): WaiverRow[] {
  return prepareCached(db, 'SELECT * FROM compliance_waivers WHERE expires_at > ? ORDER BY device_id, rule_id').all(now) as WaiverRow[];
}

export interface RunRow {
  id: string;
  reason: string;
  state: 'running' | 'finished' | 'failed';
  total: number;
  done: number;
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

export function insertRun(db: DB, id: string, reason: string, total: number, now: number): void {
  prepareCached(db, "INSERT INTO compliance_runs (id, reason, state, total, started_at) VALUES (?, ?, 'running', ?, ?)").run(id, reason, total, now);
}

export function updateRun(db: DB, id: string, done: number, end: { state: 'finished' | 'failed'; error: string | null; at: number } | null): void {
  if (!end) prepareCached(db, 'UPDATE compliance_runs SET done = ? WHERE id = ?').run(done, id);
  else prepareCached(db, 'UPDATE compliance_runs SET done = ?, state = ?, error = ?, finished_at = ? WHERE id = ?').run(done, end.state, end.error, end.at, id);
}

export function getRunRow(db: DB, id: string): RunRow | undefined {
  return prepareCached(db, 'SELECT * FROM compliance_runs WHERE id = ?').get(id) as RunRow | undefined;
}

/** Failing rules of each device's newest stored version, without those under a waiver in force: count by rule. */
export function countViolationsByRule(db: DB, now: number): { rule_id: string; n: number }[] {
  return prepareCached(
    db,
    `SELECT r.rule_id, count(*) AS n
       FROM compliance_judged j
       JOIN compliance_results r ON r.judged_id = j.id
      WHERE j.backup_id = (SELECT b.id FROM backups b WHERE b.device_id = j.device_id AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL
                            ORDER BY b.started_at DESC, b.id DESC LIMIT 1)
        AND NOT EXISTS (SELECT 1 FROM compliance_waivers w WHERE w.device_id = j.device_id AND w.rule_id = r.rule_id AND w.expires_at > ?)
      GROUP BY r.rule_id`,
  ).all(now) as { rule_id: string; n: number }[];
}

/** The failures of a device's most recently judged version (the state a new judgement is compared with). */
export function latestJudgedFailures(db: DB, deviceId: number): string[] {
  return prepareCached(
    db,
    `SELECT rule_id FROM compliance_results
      WHERE judged_id = (SELECT id FROM compliance_judged WHERE device_id = ? ORDER BY judged_at DESC, id DESC LIMIT 1)`,
  )
    .pluck()
    .all(deviceId) as string[];
}

export function listDeviceWaiverRules(db: DB, deviceId: number, now: number): string[] {
  return prepareCached(db, 'SELECT rule_id FROM compliance_waivers WHERE device_id = ? AND expires_at > ?').pluck().all(deviceId, now) as string[];
}

export function getRuleRow(db: DB, id: string): RuleRow | undefined {
  return prepareCached(db, 'SELECT * FROM compliance_rules WHERE id = ?').get(id) as RuleRow | undefined;
}

/** A device's waivers, in force and expired, newest expiry first. */
export function listDeviceWaiverRows(db: DB, deviceId: number): WaiverRow[] {
  return prepareCached(db, 'SELECT * FROM compliance_waivers WHERE device_id = ? ORDER BY expires_at DESC, id DESC').all(deviceId) as WaiverRow[];
}

export function getWaiverRow(db: DB, id: number): WaiverRow | undefined {
  return prepareCached(db, 'SELECT * FROM compliance_waivers WHERE id = ?').get(id) as WaiverRow | undefined;
}

export function deleteWaiverRow(db: DB, id: number): boolean {
  return prepareCached(db, 'DELETE FROM compliance_waivers WHERE id = ?').run(id).changes > 0;
}

export interface TrendRow {
  /** The end of the day (exclusive), epoch milliseconds. */
  day_end: number;
  devices: number;
  failing_devices: number;
  violations: number;
}

/**
 * For each of `days` days ending at `lastDayEnd`: the given devices' most recent judged version stored before the
 * day's end, counted (devices judged, those failing a rule, failures). History as judged: waivers are not applied.
 */
export function listTrendRows(db: DB, deviceIds: readonly number[], lastDayEnd: number, days: number): TrendRow[] {
  return db
    .prepare(
      `WITH RECURSIVE day(i, day_end) AS (SELECT 0, ? UNION ALL SELECT i + 1, day_end - 86400000 FROM day WHERE i + 1 < ?)
       SELECT day.day_end, count(j.id) AS devices, ifnull(sum(j.failed > 0), 0) AS failing_devices, ifnull(sum(j.failed), 0) AS violations
         FROM day
         LEFT JOIN (SELECT value AS device_id FROM json_each(?)) d
         LEFT JOIN compliance_judged j ON j.id = (
                SELECT j2.id FROM compliance_judged j2 JOIN backups b ON b.id = j2.backup_id
                 WHERE j2.device_id = d.device_id AND b.started_at < day.day_end
                 ORDER BY b.started_at DESC, b.id DESC LIMIT 1)
        GROUP BY day.day_end ORDER BY day.day_end`,
    )
    .all(lastDayEnd, days, JSON.stringify(deviceIds)) as TrendRow[];
}
