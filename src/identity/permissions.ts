// The permission catalogue: every permission the public API spec names, plus those the web interface needs.

export const PERMISSIONS = [
  'devices.view',
  'devices.create',
  'devices.update',
  'devices.delete',
  'groups.view',
  'groups.create',
  'groups.update',
  'groups.delete',
  'credentials.view',
  'credentials.create',
  'credentials.update',
  'credentials.delete',
  'templates.view',
  'templates.create',
  'templates.update',
  'templates.delete',
  'backups.view',
  'backups.run',
  'dashboard.view',
  'api_keys.create',
  'api_keys.view',
  'api_keys.delete',
  'users.view',
  'users.create',
  'users.update',
  'users.delete',
  'roles.view',
  'roles.create',
  'roles.update',
  'roles.delete',
  'settings.view',
  'settings.update',
  'audit.view',
  'compliance.view',
  'compliance.manage',
  'inventory.view',
  'inventory.manage',
  'inventory.sync',
  'collectors.view',
  'collectors.manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const known = new Set<string>(PERMISSIONS);
export function isPermission(p: string): p is Permission {
  return known.has(p);
}

export const ADMINISTRATOR_ROLE = 'administrator';
