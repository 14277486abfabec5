// The rules of acting on users and roles: grant only what you hold, never act on someone above you, keep one full administrator.
import type { DB } from '../../db/open';
import type { Actor } from '../../identity/actor';
import { PERMISSIONS, type Permission } from '../../identity/permissions';
import { denied, missingPermissions, operation, scopeWithin } from '../../identity/policy';
import { SCOPE_ALL, type Scope } from '../../identity/principal';
import { permissionsOfRole } from '../roles/roles.policy';
import { listRolePermissions } from '../roles/roles.store';
import { expandGroupIds, expandScopeGroupIds, listEnabledScopeAllUsers, type UserRow } from './users.store';

const grant = { scope: 'groups', ownership: 'grant' } as const;

/** Each user operation's permissions and rules, read by every door (the grant rules are below). */
export const USER_OPS = {
  list: operation('users.list', ['users.view'], { scope: 'none' }, { web: ['GET /users'], cli: 'user list' }),
  create: operation('users.create', ['users.create'], grant, { web: ['GET /users/new', 'POST /users'], cli: 'user add' }),
  update: operation('users.update', ['users.update'], grant, {
    web: [
      'GET /users/:username/edit',
      'POST /users/:username/edit',
      'POST /users/:username/disable',
      'POST /users/:username/enable',
      'POST /users/:username/password',
      'POST /users/:username/totp-reset',
    ],
    cli: 'user disable',
  }),
} as const;

/** What a user holds: the permissions of their role and their expanded device-group scope. */
export interface Holding {
  permissions: ReadonlySet<Permission>;
  scope: Scope;
}

export function rolePermissions(db: DB, role: { id: number; name: string; builtin: number }): Set<Permission> {
  return new Set(permissionsOfRole(role, () => listRolePermissions(db, role.id)));
}

export function holdingOf(db: DB, user: UserRow, role: { id: number; name: string; builtin: number }): Holding {
  return {
    permissions: rolePermissions(db, role),
    scope: user.scope_all ? SCOPE_ALL : { all: false, groupIds: new Set(expandScopeGroupIds(db, user.id)) },
  };
}

export function scopeOfGroups(db: DB, groups: readonly number[] | null): Scope {
  return groups === null ? SCOPE_ALL : { all: false, groupIds: new Set(expandGroupIds(db, groups)) };
}

/** Whether a holding has every permission and scope "all": a full administrator. */
export function isFull(h: Holding): boolean {
  return h.scope.all && PERMISSIONS.every((p) => h.permissions.has(p));
}

/** No one acts on a user (edit, disable, reset password, end sessions, manage keys) whose rights exceed their own. */
export function requireNotAbove(actor: Actor, target: { username: string }, held: Holding, what: string): void {
  const missing = missingPermissions(held.permissions, actor.principal.permissions);
  if (missing.length) {
    throw denied(`You cannot ${what} user "${target.username}": they hold permissions you do not (${missing.join(', ')})`, { missing });
  }
  if (!scopeWithin(held.scope, actor.principal.scope)) {
    throw denied(`You cannot ${what} user "${target.username}": their device-group scope is wider than yours`);
  }
}

/** No one changes their own role or scope, nor disables themselves. */
export function requireNotSelf(actor: Actor, targetId: number, what: string): void {
  if (actor.principal.userId === targetId) throw denied(`You cannot ${what} your own account`);
}

/** No one grants more than they hold: the role's permissions, and (for a scoped actor) only groups inside their scope. */
export function requireGrantable(actor: Actor, role: { name: string; permissions: ReadonlySet<Permission> }, groups: readonly number[] | null): void {
  const missing = missingPermissions(role.permissions, actor.principal.permissions);
  if (missing.length) {
    throw denied(`You cannot grant the role "${role.name}": it holds permissions you do not (${missing.join(', ')})`, { missing });
  }
  const scope = actor.principal.scope;
  if (!scope.all && (groups === null || groups.some((g) => !scope.groupIds.has(g)))) {
    throw denied(
      groups === null ? 'You cannot grant the scope "all groups": your own scope is limited' : 'You can only grant device groups inside your own scope',
    );
  }
}

/**
 * The last enabled user holding every permission cannot lose it (disabled, demoted, narrowed, deleted), nor can the
 * role that gives it be reduced: the appliance would be left with no one able to manage it.
 * `stillFull(userId, roleId)` says whether a full administrator stays full after the change.
 */
export function requireFullAdminRemains(db: DB, stillFull: (u: { id: number; role_id: number }) => boolean, what: string): void {
  const roles = new Map<number, boolean>();
  const fullRole = (u: { role_id: number; role_name: string; role_builtin: number }): boolean => {
    let full = roles.get(u.role_id);
    if (full === undefined) {
      const perms = rolePermissions(db, { id: u.role_id, name: u.role_name, builtin: u.role_builtin });
      roles.set(u.role_id, (full = PERMISSIONS.every((p) => perms.has(p))));
    }
    return full;
  };
  const fullNow = listEnabledScopeAllUsers(db).filter(fullRole);
  if (fullNow.length > 0 && !fullNow.some(stillFull)) {
    throw denied(`Refused: ${what} would leave no enabled user holding every permission`);
  }
}
