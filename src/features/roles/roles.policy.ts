// Who may do what with roles, and the built-in roles: their permissions are defined here, never stored or edited.
import { ADMINISTRATOR_ROLE, PERMISSIONS, type Permission } from '../../identity/permissions';
import { operation } from '../../identity/policy';

const grant = { scope: 'none', ownership: 'grant' } as const;

export const ROLE_OPS = {
  list: operation('roles.list', ['roles.view'], { scope: 'none' }, { web: ['GET /roles'], cli: 'role list' }),
  create: operation('roles.create', ['roles.create'], grant, { web: ['GET /roles/new', 'POST /roles'], cli: 'role add' }),
  update: operation('roles.update', ['roles.update'], grant, { web: ['GET /roles/:name/edit', 'POST /roles/:name/edit'], cli: 'role set-permissions' }),
} as const;

/** One's own API keys: a key acts with its user's rights, so every role may hold them. */
const OWN_KEYS: Permission[] = ['api_keys.view', 'api_keys.create', 'api_keys.delete'];
/** The inventory, its backups and their compliance, without credentials (where secrets go), users, roles, settings or the audit trail. */
const READ_ONLY: Permission[] = [
  'dashboard.view',
  'devices.view',
  'groups.view',
  'templates.view',
  'backups.view',
  'compliance.view',
  'collectors.view',
  ...OWN_KEYS,
];

export interface BuiltinRole {
  name: string;
  description: string;
  permissions: readonly Permission[];
}

/**
 * The built-in roles, created at start-up when missing (roles.service ensureBuiltinRoles), never editable: what
 * each holds is this table, so a new permission reaches them with the release that adds it. A custom role that had
 * one of these names before keeps its own permissions (it is not taken over).
 */
export const BUILTIN_ROLES: readonly BuiltinRole[] = [
  { name: ADMINISTRATOR_ROLE, description: 'Every permission', permissions: PERMISSIONS },
  { name: 'read-only', description: 'Sees the inventory, the dashboard and every backup; changes nothing but its own API keys', permissions: READ_ONLY },
  { name: 'backup-operator', description: 'Read-only, and may run backups and cancel or resume backup jobs', permissions: [...READ_ONLY, 'backups.run'] },
  {
    name: 'auditor',
    description: 'Read-only, and reads the audit trail, users, roles and notification settings',
    permissions: [...READ_ONLY, 'audit.view', 'users.view', 'roles.view', 'settings.view'],
  },
];

const byName: ReadonlyMap<string, BuiltinRole> = new Map(BUILTIN_ROLES.map((r) => [r.name, r]));

/** The permissions of a role row: a built-in's from the table above (catalogue order), a custom role's as stored. */
export function permissionsOfRole(role: { name: string; builtin: number | boolean }, stored: () => readonly string[]): Permission[] {
  const builtin = role.builtin ? byName.get(role.name) : undefined;
  return builtin ? PERMISSIONS.filter((p) => builtin.permissions.includes(p)) : (stored() as Permission[]);
}
