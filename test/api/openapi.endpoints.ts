// The 25 endpoints of spec section 4 with their required permissions, and the additive ones (compliance, docs/compliance.md), as data for the OpenAPI and permission-matrix tests.
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

/** Endpoints added to the API after the spec (additive: same conventions, in the OpenAPI document): retiring a device instead of deleting it (#25), compliance (#23). */
export const ADDITIVE_ENDPOINTS: readonly SpecEndpoint[] = [
  { method: 'GET', path: '/compliance/rules', permission: 'compliance.view' },
  { method: 'GET', path: '/compliance/rules/{rule_id}', permission: 'compliance.view' },
  { method: 'POST', path: '/compliance/rules', permission: 'compliance.manage' },
  { method: 'PUT', path: '/compliance/rules/{rule_id}', permission: 'compliance.manage' },
  { method: 'DELETE', path: '/compliance/rules/{rule_id}', permission: 'compliance.manage' },
  { method: 'GET', path: '/compliance/summary', permission: 'compliance.view' },
  { method: 'GET', path: '/devices/{device_id}/compliance', permission: 'compliance.view' },
  { method: 'GET', path: '/devices/{device_id}/compliance/waivers', permission: 'compliance.view' },
  { method: 'POST', path: '/devices/{device_id}/compliance/waivers', permission: 'compliance.manage' },
  { method: 'DELETE', path: '/compliance/waivers/{waiver_id}', permission: 'compliance.manage' },
  { method: 'POST', path: '/devices/{device_id}/retire', permission: 'devices.update' },
  { method: 'POST', path: '/devices/{device_id}/reactivate', permission: 'devices.update' },
];
