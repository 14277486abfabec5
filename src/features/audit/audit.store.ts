// Queries for the audit trail (table from schema 0001, door and changes from 0006): who changed what, through which door.
import type { DB } from '../../db/open';

export interface AuditRow {
  id: number;
  at: number;
  user_id: number | null;
  actor: string;
  action: string;
  target: string;
  details: string;
  door: 'api' | 'web' | 'cli' | 'system' | 'ldap' | 'oidc' | 'inventory';
  door_ref: string | null;
  request_id: string | null;
  changes: string;
}

export interface AuditInsert {
  at: number;
  userId: number | null;
  actor: string;
  action: string;
  target: string;
  details: string;
  door: AuditRow['door'];
  doorRef: string | null;
  requestId: string | null;
  changes: string;
}

export function insertAuditRow(db: DB, e: AuditInsert): void {
  db.prepare(
    `INSERT INTO audit_log (at, user_id, actor, action, target, details, door, door_ref, request_id, changes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(e.at, e.userId, e.actor, e.action, e.target, e.details, e.door, e.doorRef, e.requestId, e.changes);
}

/** Filters of the audit views; every one optional, combined with AND. `action` matches a prefix ("device." or "device.update"). */
export interface AuditFilter {
  actor?: string;
  action?: string;
  target?: string;
  since?: number;
  until?: number;
  /**
   * A scoped reader's expanded device groups: rows about a device (its target, or the device of a template trial)
   * show only when the device is in one of them now; rows about a deleted device no longer have a group and are hidden.
   */
  deviceGroups?: readonly number[];
}

/** The device a row is about, if any: `device <id>` targets, and the device a template was tried on. */
const ROW_DEVICE = `CASE WHEN target GLOB 'device [0-9]*' THEN CAST(substr(target, 8) AS INTEGER)
  WHEN action = 'template.try' AND json_valid(details) THEN json_extract(details, '$.device_id') END`;

/** Rows that list the devices they are about (`device_ids` in their details). */
const ROW_DEVICE_LIST = `json_valid(details) AND json_type(details, '$.device_ids') = 'array'`;

function where(f: AuditFilter): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  if (f.actor) {
    parts.push('actor = ? COLLATE NOCASE');
    args.push(f.actor);
  }
  if (f.action) {
    // A prefix match without LIKE's wildcards: range on the text.
    parts.push('action >= ? AND action < ?');
    args.push(f.action, f.action + '\uffff');
  }
  if (f.target) {
    parts.push('instr(lower(target), lower(?)) > 0');
    args.push(f.target);
  }
  if (f.since !== undefined) {
    parts.push('at >= ?');
    args.push(f.since);
  }
  if (f.until !== undefined) {
    parts.push('at < ?');
    args.push(f.until);
  }
  if (f.deviceGroups) {
    // A row about one device shows when that device is in scope; a row listing devices (a backup run of a group or
    // of all devices) when one of them is: listed in the row, or an item of its job (the list in a row is capped).
    parts.push(`(CASE WHEN ${ROW_DEVICE} IS NOT NULL
        THEN EXISTS (SELECT 1 FROM devices d WHERE d.id = ${ROW_DEVICE} AND d.group_id IN (SELECT value FROM json_each(?)))
      WHEN ${ROW_DEVICE_LIST}
        THEN EXISTS (SELECT 1 FROM json_each(details, '$.device_ids') j JOIN devices d ON d.id = j.value
                      WHERE d.group_id IN (SELECT value FROM json_each(?)))
          OR EXISTS (SELECT 1 FROM backup_job_items i WHERE i.job_id = json_extract(details, '$.job')
                      AND i.group_id IN (SELECT value FROM json_each(?)))
      ELSE 1 END)`);
    args.push(...Array<string>(3).fill(JSON.stringify(f.deviceGroups)));
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', args };
}

export function countAudit(db: DB, f: AuditFilter = {}): number {
  const w = where(f);
  return db
    .prepare(`SELECT count(*) FROM audit_log ${w.sql}`)
    .pluck()
    .get(...w.args) as number;
}

export function listAuditPage(db: DB, f: AuditFilter, offset: number, limit: number): AuditRow[] {
  const w = where(f);
  return db.prepare(`SELECT * FROM audit_log ${w.sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`).all(...w.args, limit, offset) as AuditRow[];
}

/** The distinct action names on record, for the filter's choices. */
export function listAuditActions(db: DB): string[] {
  return db.prepare('SELECT DISTINCT action FROM audit_log ORDER BY action').pluck().all() as string[];
}

export function deleteAuditBefore(db: DB, before: number): number {
  return db.prepare('DELETE FROM audit_log WHERE at < ?').run(before).changes;
}

/** Which of the devices are in one of the groups now (a scoped reader's view of a row that lists devices). */
export function devicesInGroups(db: DB, deviceIds: readonly number[], groups: readonly number[]): Set<number> {
  const rows = db
    .prepare('SELECT id FROM devices WHERE id IN (SELECT value FROM json_each(?)) AND group_id IN (SELECT value FROM json_each(?))')
    .pluck()
    .all(JSON.stringify(deviceIds), JSON.stringify(groups)) as number[];
  return new Set(rows);
}

/** How many items of a backup job were in one of the groups; null when the job is no longer kept. */
export function jobItemsInGroups(db: DB, jobId: string, groups: readonly number[]): number | null {
  const row = db
    .prepare(
      `SELECT (SELECT count(*) FROM backup_jobs WHERE id = @job) AS kept,
              (SELECT count(*) FROM backup_job_items WHERE job_id = @job AND group_id IN (SELECT value FROM json_each(@groups))) AS n`,
    )
    .get({ job: jobId, groups: JSON.stringify(groups) }) as { kept: number; n: number };
  return row.kept ? row.n : null;
}
