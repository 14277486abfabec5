// Queries for users, their device-group scope, and the recursive expansion of a scope to subgroups.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export interface UserRow {
  id: number;
  username: string;
  password_hash: string;
  role_id: number;
  scope_all: number;
  timezone: string | null;
  disabled: number;
  must_change_password: number;
  created_at: number;
  updated_at: number;
  /** 'ldap' / 'oidc': created by directory sign-in; no local password, role and scope owned by [auth.ldap] / [auth.oidc]'s mapping. */
  source: 'local' | 'ldap' | 'oidc';
}

export interface UserListRow extends UserRow {
  role_name: string;
}

export function getUserByUsername(db: DB, username: string): UserRow | undefined {
  return db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
}

export function getUserById(db: DB, id: number): UserRow | undefined {
  return db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
}

export function listUserRows(db: DB): UserListRow[] {
  return db.prepare('SELECT u.*, r.name AS role_name FROM users u JOIN roles r ON r.id = u.role_id ORDER BY u.username').all() as UserListRow[];
}

export function insertUser(
  db: DB,
  u: { username: string; password_hash: string; role_id: number; scope_all: boolean; must_change_password: boolean; timezone?: string | null },
): number {
  const now = Date.now();
  const info = db
    .prepare(
      `INSERT INTO users (username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)`,
    )
    .run(u.username, u.password_hash, u.role_id, u.scope_all ? 1 : 0, u.timezone ?? null, u.must_change_password ? 1 : 0, now, now);
  return Number(info.lastInsertRowid);
}

export function updateUserFields(
  db: DB,
  id: number,
  f: Partial<Pick<UserRow, 'password_hash' | 'role_id' | 'scope_all' | 'timezone' | 'disabled' | 'must_change_password'>>,
): void {
  const cols = Object.keys(f) as (keyof typeof f)[];
  if (cols.length === 0) return;
  // Column names come from the fixed set of the type above, never from input.
  const set = cols.map((c) => `${c} = @${c}`).join(', ');
  db.prepare(`UPDATE users SET ${set}, updated_at = @updated_at WHERE id = @id`).run({ ...f, id, updated_at: Date.now() });
}

export function listScopeGroupIds(db: DB, userId: number): number[] {
  return db.prepare('SELECT group_id FROM user_scope_groups WHERE user_id = ? ORDER BY group_id').pluck().all(userId) as number[];
}

export function replaceScopeGroups(db: DB, userId: number, groupIds: readonly number[]): void {
  db.prepare('DELETE FROM user_scope_groups WHERE user_id = ?').run(userId);
  const ins = db.prepare('INSERT INTO user_scope_groups (user_id, group_id) VALUES (?, ?)');
  for (const g of groupIds) ins.run(userId, g);
}

/** The user's scope groups and all their descendants. */
export function expandScopeGroupIds(db: DB, userId: number): number[] {
  // Runs on every API request of a scoped user: prepared once per handle.
  const rows = prepareCached(
    db,
    `WITH RECURSIVE s(id) AS (
       SELECT group_id FROM user_scope_groups WHERE user_id = ?
       UNION SELECT g.id FROM device_groups g JOIN s ON g.parent_id = s.id)
     SELECT id FROM s`,
  ).all(userId) as { id: number }[];
  return rows.map((r) => r.id);
}

export function existingGroupIds(db: DB, ids: readonly number[]): Set<number> {
  const stmt = db.prepare('SELECT id FROM device_groups WHERE id = ?').pluck();
  return new Set(ids.filter((id) => stmt.get(id) !== undefined));
}

/** Enabled users whose scope is "all", with their role: the candidates for "holds every permission". */
export function listEnabledScopeAllUsers(db: DB): { id: number; role_id: number; role_name: string; role_builtin: number }[] {
  return db
    .prepare(
      `SELECT u.id, u.role_id, r.name AS role_name, r.builtin AS role_builtin
         FROM users u JOIN roles r ON r.id = u.role_id
        WHERE u.disabled = 0 AND u.scope_all = 1`,
    )
    .all() as { id: number; role_id: number; role_name: string; role_builtin: number }[];
}

/** End a user's web sessions (all, or all but one): a changed password, role, scope or a disabled account. */
export function deleteUserSessions(db: DB, userId: number, exceptHash: Buffer | null = null): number {
  return db.prepare('DELETE FROM web_sessions WHERE user_id = ? AND (? IS NULL OR id_hash <> ?)').run(userId, exceptHash, exceptHash).changes;
}

/** Groups and all their descendants (the scope a list of groups would give). */
export function expandGroupIds(db: DB, groupIds: readonly number[]): number[] {
  if (groupIds.length === 0) return [];
  return db
    .prepare(
      `WITH RECURSIVE s(id) AS (
         SELECT value FROM json_each(?)
         UNION SELECT g.id FROM device_groups g JOIN s ON g.parent_id = s.id)
       SELECT id FROM s`,
    )
    .pluck()
    .all(JSON.stringify(groupIds)) as number[];
}
