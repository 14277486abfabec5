// Roles: the built-in administrator (every permission, cannot be reduced) and custom roles with a set of permissions.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation } from '../../errors';
import { descriptionProblem, hasControlCharacters } from '../../lib/names';
import { ADMINISTRATOR_ROLE, PERMISSIONS, isPermission, type Permission } from '../../identity/permissions';
import {
  getRoleByName,
  insertRole,
  listRolePermissions,
  listRoleRows,
  replaceRolePermissions,
  type RoleRow,
} from './roles.store';

export interface Role {
  id: number;
  name: string;
  description: string;
  builtin: boolean;
  permissions: Permission[];
}

function toRole(db: DB, row: RoleRow): Role {
  const permissions =
    row.builtin && row.name === ADMINISTRATOR_ROLE ? [...PERMISSIONS] : (listRolePermissions(db, row.id) as Permission[]);
  return { id: row.id, name: row.name, description: row.description, builtin: row.builtin === 1, permissions };
}

/** Create the administrator role if missing. Its permissions are implicit (always the whole catalogue). */
export function ensureBuiltinRoles(db: DB): void {
  if (getRoleByName(db, ADMINISTRATOR_ROLE)) return;
  try {
    insertRole(db, { name: ADMINISTRATOR_ROLE, description: 'Every permission', builtin: true });
  } catch (err) {
    // Another process (init and serve starting together) created it between our check and insert.
    if (!isUniqueViolation(err)) throw err;
  }
}

export function parsePermissions(list: readonly string[]): Permission[] {
  const bad = list.filter((p) => !isPermission(p));
  if (bad.length) {
    throw ApiError.validation(
      bad.map((p) => ({ field: 'permissions', message: `unknown permission "${p}"` })),
      `unknown permission: ${bad.join(', ')} (known: ${PERMISSIONS.join(', ')})`,
    );
  }
  return [...new Set(list as Permission[])].sort();
}

export function createRole(db: DB, input: { name: string; description?: string; permissions: readonly string[] }): Role {
  const permissions = parsePermissions(input.permissions);
  const name = input.name.trim();
  const descriptionError = descriptionProblem(input.description ?? '');
  if (descriptionError) throw ApiError.validation([{ field: 'description', message: descriptionError }], `invalid role description: ${descriptionError}`);
  if (hasControlCharacters(input.name) || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw ApiError.validation([{ field: 'name', message: 'use 1-64 letters, digits, dot, dash or underscore' }], 'invalid role name');
  }
  return db.transaction(() => {
    try {
      const id = insertRole(db, { name, description: input.description ?? '', builtin: false });
      replaceRolePermissions(db, id, permissions);
      return toRole(db, { id, name, description: input.description ?? '', builtin: 0, created_at: Date.now() });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('ROLE_NAME_EXISTS', `a role named "${name}" already exists`);
      throw err;
    }
  })();
}

export function listRoles(db: DB): Role[] {
  return listRoleRows(db).map((r) => toRole(db, r));
}

export function getRole(db: DB, name: string): Role | undefined {
  const row = getRoleByName(db, name);
  return row && toRole(db, row);
}

export function setRolePermissions(db: DB, name: string, permissions: readonly string[]): Role {
  const row = getRoleByName(db, name);
  if (!row) throw ApiError.notFound(`role "${name}"`);
  if (row.builtin) throw new ApiError('ROLE_BUILTIN_READONLY', 'the administrator role always holds every permission');
  const perms = parsePermissions(permissions);
  db.transaction(() => replaceRolePermissions(db, row.id, perms))();
  return toRole(db, row);
}
