// Queries for web sessions (schema 0003): looked up by the SHA-256 of the cookie value, never by the value itself.
import type { DB } from '../../db/open';

export interface SessionRow {
  id_hash: Buffer;
  user_id: number;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** The session with everything a request needs about its user, in one indexed query. */
export interface SessionAuthRow extends SessionRow {
  username: string;
  disabled: number;
  must_change_password: number;
  scope_all: number;
  timezone: string | null;
  role_id: number;
  role_name: string;
  role_builtin: number;
}

export function insertSession(db: DB, s: SessionRow & { address: string; user_agent: string }): void {
  db.prepare(
    `INSERT INTO web_sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at, address, user_agent)
     VALUES (@id_hash, @user_id, @csrf_token, @created_at, @last_seen_at, @expires_at, @address, @user_agent)`,
  ).run(s);
}

export function findSessionForAuth(db: DB, idHash: Buffer): SessionAuthRow | undefined {
  return db
    .prepare(
      `SELECT s.*, u.username, u.disabled, u.must_change_password, u.scope_all, u.timezone,
              r.id AS role_id, r.name AS role_name, r.builtin AS role_builtin
         FROM web_sessions s JOIN users u ON u.id = s.user_id JOIN roles r ON r.id = u.role_id
        WHERE s.id_hash = ?`,
    )
    .get(idHash) as SessionAuthRow | undefined;
}

export function touchSession(db: DB, idHash: Buffer, at: number): void {
  db.prepare('UPDATE web_sessions SET last_seen_at = ? WHERE id_hash = ?').run(at, idHash);
}

export function deleteSession(db: DB, idHash: Buffer): void {
  db.prepare('DELETE FROM web_sessions WHERE id_hash = ?').run(idHash);
}

/** Every session of a user but one (password change: other browsers must log in again); the query lives with users. */
export { deleteUserSessions } from '../../features/users/users.store';

export function deleteExpiredSessions(db: DB, now: number, idleBefore: number): number {
  return db.prepare('DELETE FROM web_sessions WHERE expires_at <= ? OR last_seen_at <= ?').run(now, idleBefore).changes;
}
