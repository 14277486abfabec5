// Queries for the audit trail (table from schema 0001, door and changes from 0006): who changed what, through which door.
import type { DB } from '../../db/open';
import { boundLimit } from '../../db/statements';

export interface AuditRow {
  id: number;
  at: number;
  user_id: number | null;
  actor: string;
  action: string;
  target: string;
  details: string;
  door: 'api' | 'web' | 'cli' | 'system';
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
    parts.push(`(${ROW_DEVICE} IS NULL OR EXISTS (SELECT 1 FROM devices d WHERE d.id = ${ROW_DEVICE} AND d.group_id IN (SELECT value FROM json_each(?))))`);
    args.push(JSON.stringify(f.deviceGroups));
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
  return db.prepare(`SELECT * FROM audit_log ${w.sql} ORDER BY at DESC, id DESC ${boundLimit('?')} OFFSET ?`).all(...w.args, limit, offset) as AuditRow[];
}

/** The distinct action names on record, for the filter's choices. */
export function listAuditActions(db: DB): string[] {
  return db.prepare('SELECT DISTINCT action FROM audit_log ORDER BY action').pluck().all() as string[];
}

export function deleteAuditBefore(db: DB, before: number): number {
  return db.prepare('DELETE FROM audit_log WHERE at < ?').run(before).changes;
}
