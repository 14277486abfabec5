// Roles: the built-in roles (roles.policy, never edited) and custom roles, created and edited under the grant rules, audited.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation } from '../../errors';
import { descriptionProblem, hasControlCharacters } from '../../lib/names';
import { PERMISSIONS, isPermission, type Permission } from '../../identity/permissions';
import { getRoleByName, insertRole, listRolePermissions, listRoleRows, replaceRolePermissions, type RoleRow } from './roles.store';
import { changesBetween, recordAudit } from '../audit/audit.service';
import { isUserActor, type Actor } from '../../identity/actor';
import { authorize, denied, missingPermissions } from '../../identity/policy';
import { requireFullAdminRemains } from '../users/users.policy';
import { BUILTIN_ROLES, ROLE_OPS, permissionsOfRole } from './roles.policy';

export interface Role {
  id: number;
  name: string;
  description: string;
  builtin: boolean;
  permissions: Permission[];
}

function toRole(db: DB, row: RoleRow): Role {
  const permissions = permissionsOfRole(row, () => listRolePermissions(db, row.id));
  return { id: row.id, name: row.name, description: row.description, builtin: row.builtin === 1, permissions };
}

/**
 * Create the built-in roles that are missing (at init and at every start, so an upgrade brings new ones). Their
 * permissions are implicit (roles.policy BUILTIN_ROLES); a custom role already holding one of the names is left alone.
 */
export function ensureBuiltinRoles(db: DB): void {
  for (const r of BUILTIN_ROLES) {
    if (getRoleByName(db, r.name)) continue;
    try {
      insertRole(db, { name: r.name, description: r.description, builtin: true });
    } catch (err) {
      // Another process (init and serve starting together) created it between our check and insert.
      if (!isUniqueViolation(err)) throw err;
    }
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

/** Create a role: `roles.create`, and only permissions the creator holds. */
export function createRole(db: DB, actor: Actor, input: { name: string; description?: string; permissions: readonly string[] }): Role {
  authorize(actor, ROLE_OPS.create);
  const permissions = parsePermissions(input.permissions);
  const name = input.name.trim();
  const descriptionError = descriptionProblem(input.description ?? '');
  if (descriptionError) throw ApiError.validation([{ field: 'description', message: descriptionError }], `invalid role description: ${descriptionError}`);
  if (hasControlCharacters(input.name) || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw ApiError.validation([{ field: 'name', message: 'use 1-64 letters, digits, dot, dash or underscore' }], 'invalid role name');
  }
  const missing = missingPermissions(permissions, actor.principal.permissions);
  if (missing.length) throw denied(`You cannot create a role with permissions you do not hold (${missing.join(', ')})`, { missing });
  return db
    .transaction(() => {
      let id: number;
      try {
        id = insertRole(db, { name, description: input.description ?? '', builtin: false });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('ROLE_NAME_EXISTS', `a role named "${name}" already exists`);
        throw err;
      }
      replaceRolePermissions(db, id, permissions);
      recordAudit(db, actor, {
        action: 'role.create',
        target: `role ${name}`,
        changes: changesBetween(null, { description: input.description ?? '', permissions }),
      });
      return toRole(db, { id, name, description: input.description ?? '', builtin: 0, created_at: Date.now() });
    })
    .immediate();
}

export function listRoles(db: DB): Role[] {
  return listRoleRows(db).map((r) => toRole(db, r));
}

export function getRole(db: DB, name: string): Role | undefined {
  const row = getRoleByName(db, name);
  return row && toRole(db, row);
}

/**
 * Replace a custom role's permissions: `roles.update`; never the administrator role nor a role the editor holds
 * (that would be raising oneself); only adding permissions the editor holds; and never taking the last full
 * administrator's permissions away.
 */
export function setRolePermissions(db: DB, actor: Actor, name: string, permissions: readonly string[]): Role {
  authorize(actor, ROLE_OPS.update);
  const perms = parsePermissions(permissions);
  return db
    .transaction(() => {
      const row = getRoleByName(db, name);
      if (!row) throw ApiError.notFound(`role "${name}"`);
      if (row.builtin) throw new ApiError('ROLE_BUILTIN_READONLY', `the built-in role "${row.name}" cannot be changed`);
      if (isUserActor(actor) && actor.principal.roleName.toLowerCase() === row.name.toLowerCase()) {
        throw denied(`You cannot change the role "${row.name}": it is your own role`);
      }
      const before = listRolePermissions(db, row.id) as Permission[];
      const added = perms.filter((p) => !before.includes(p));
      const missing = missingPermissions(added, actor.principal.permissions);
      if (missing.length) throw denied(`You cannot add permissions you do not hold (${missing.join(', ')})`, { missing });
      const wasFull = PERMISSIONS.every((p) => before.includes(p));
      if (wasFull && !PERMISSIONS.every((p) => perms.includes(p))) {
        requireFullAdminRemains(db, (u) => u.role_id !== row.id, `reducing the role ${row.name}`);
      }
      replaceRolePermissions(db, row.id, perms);
      recordAudit(db, actor, { action: 'role.update', target: `role ${row.name}`, changes: changesBetween({ permissions: before }, { permissions: perms }) });
      return toRole(db, row);
    })
    .immediate();
}
