// The 25 endpoints of spec section 4 with their required permissions, as data for the OpenAPI and permission-matrix tests.
import type { Permission } from '../../src/identity/permissions';

export interface SpecEndpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI-style path relative to /api/v1, as the spec writes it. */
  path: string;
  permission: Permission;
}

export const SPEC_ENDPOINTS: readonly SpecEndpoint[] = [
  { method: 'GET', path: '/devices', permission: 'devices.view' },
  { method: 'GET', path: '/devices/unreachable', permission: 'devices.view' },
  { method: 'GET', path: '/devices/{device_id}', permission: 'devices.view' },
  { method: 'POST', path: '/devices', permission: 'devices.create' },
  { method: 'PUT', path: '/devices/{device_id}', permission: 'devices.update' },
  { method: 'DELETE', path: '/devices/{device_id}', permission: 'devices.delete' },
  { method: 'GET', path: '/devices/{device_id}/backups', permission: 'backups.view' },
  { method: 'GET', path: '/groups', permission: 'groups.view' },
  { method: 'GET', path: '/groups/tree', permission: 'groups.view' },
  { method: 'GET', path: '/groups/{group_id}', permission: 'groups.view' },
  { method: 'POST', path: '/groups', permission: 'groups.create' },
  { method: 'PUT', path: '/groups/{group_id}', permission: 'groups.update' },
  { method: 'DELETE', path: '/groups/{group_id}', permission: 'groups.delete' },
  { method: 'GET', path: '/credentials', permission: 'credentials.view' },
  { method: 'GET', path: '/credentials/{credential_id}', permission: 'credentials.view' },
  { method: 'POST', path: '/credentials', permission: 'credentials.create' },
  { method: 'PUT', path: '/credentials/{credential_id}', permission: 'credentials.update' },
  { method: 'DELETE', path: '/credentials/{credential_id}', permission: 'credentials.delete' },
  { method: 'GET', path: '/templates', permission: 'templates.view' },
  { method: 'GET', path: '/templates/{template_id}', permission: 'templates.view' },
  { method: 'POST', path: '/templates', permission: 'templates.create' },
  { method: 'PUT', path: '/templates/{template_id}', permission: 'templates.update' },
  { method: 'DELETE', path: '/templates/{template_id}', permission: 'templates.delete' },
  { method: 'GET', path: '/backups/{backup_id}/content', permission: 'backups.view' },
  { method: 'GET', path: '/stats', permission: 'dashboard.view' },
];

/** Operations the appliance adds to spec section 4, in its conventions (issue #25: retire a device instead of deleting it). */
export const API_ADDITIONS: readonly SpecEndpoint[] = [
  { method: 'POST', path: '/devices/{device_id}/retire', permission: 'devices.update' },
  { method: 'POST', path: '/devices/{device_id}/reactivate', permission: 'devices.update' },
];
