// Queries for the audit log (table from schema 0001): who did what through the web interface, and when.
import type { DB } from '../db/open';
import { boundLimit } from '../db/statements';

export interface AuditRow {
  id: number;
  at: number;
  user_id: number | null;
  actor: string;
  action: string;
  target: string;
  details: string;
}

export function insertAudit(
  db: DB,
  e: { userId: number | null; actor: string; action: string; target?: string; details?: Record<string, unknown> },
  at = Date.now(),
): void {
  db.prepare('INSERT INTO audit_log (at, user_id, actor, action, target, details) VALUES (?, ?, ?, ?, ?, ?)').run(
    at,
    e.userId,
    e.actor,
    e.action,
    e.target ?? '',
    JSON.stringify(e.details ?? {}),
  );
}

export function countAudit(db: DB): number {
  return db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
}

export function listAuditPage(db: DB, offset: number, limit: number): AuditRow[] {
  return db.prepare(`SELECT * FROM audit_log ORDER BY at DESC, id DESC ${boundLimit('?')} OFFSET ?`).all(limit, offset) as AuditRow[];
}
