// Queries for roles and their permissions.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

export interface RoleRow {
  id: number;
  name: string;
  description: string;
  builtin: number;
  created_at: number;
}

export function getRoleByName(db: DB, name: string): RoleRow | undefined {
  return db.prepare('SELECT * FROM roles WHERE name = ?').get(name) as RoleRow | undefined;
}

export function getRoleById(db: DB, id: number): RoleRow | undefined {
  return db.prepare('SELECT * FROM roles WHERE id = ?').get(id) as RoleRow | undefined;
}

export function listRoleRows(db: DB): RoleRow[] {
  return db.prepare('SELECT * FROM roles ORDER BY name').all() as RoleRow[];
}

export function insertRole(db: DB, r: { name: string; description: string; builtin: boolean }): number {
  const info = db
    .prepare('INSERT INTO roles (name, description, builtin, created_at) VALUES (?, ?, ?, ?)')
    .run(r.name, r.description, r.builtin ? 1 : 0, Date.now());
  return Number(info.lastInsertRowid);
}

export function listRolePermissions(db: DB, roleId: number): string[] {
  // Runs on every API request: prepared once per handle.
  const rows = prepareCached(db, 'SELECT permission FROM role_permissions WHERE role_id = ? ORDER BY permission').all(roleId) as { permission: string }[];
  return rows.map((r) => r.permission);
}

export function replaceRolePermissions(db: DB, roleId: number, permissions: readonly string[]): void {
  db.prepare('DELETE FROM role_permissions WHERE role_id = ?').run(roleId);
  const ins = db.prepare('INSERT INTO role_permissions (role_id, permission) VALUES (?, ?)');
  for (const p of permissions) ins.run(roleId, p);
}

export function countUsersWithRole(db: DB, roleId: number): number {
  return db.prepare('SELECT count(*) FROM users WHERE role_id = ?').pluck().get(roleId) as number;
}
