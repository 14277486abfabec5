// The automation API's operations (issue #26), additive to spec section 4, with the permissions of their policy entries.
import type { Permission } from '../../src/identity/permissions';

export interface AutomationEndpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  permissions: readonly Permission[];
}

export const AUTOMATION_ENDPOINTS: readonly AutomationEndpoint[] = [
  { method: 'POST', path: '/jobs', permissions: ['devices.view', 'backups.run'] },
  { method: 'GET', path: '/jobs', permissions: ['backups.view'] },
  { method: 'GET', path: '/jobs/{job_id}', permissions: ['backups.view'] },
  { method: 'POST', path: '/jobs/{job_id}/cancel', permissions: ['backups.run'] },
  { method: 'GET', path: '/diff', permissions: ['devices.view', 'backups.view'] },
  { method: 'GET', path: '/search', permissions: ['devices.view', 'backups.view'] },
  { method: 'GET', path: '/audit', permissions: ['audit.view'] },
  { method: 'GET', path: '/notifications/channels', permissions: ['settings.view'] },
  { method: 'GET', path: '/notifications/channels/{name}', permissions: ['settings.view'] },
  { method: 'GET', path: '/notifications/rules', permissions: ['settings.view'] },
  { method: 'GET', path: '/notifications/rules/{name}', permissions: ['settings.view'] },
  { method: 'POST', path: '/notifications/channels', permissions: ['settings.view', 'settings.update'] },
  { method: 'PUT', path: '/notifications/channels/{name}', permissions: ['settings.view', 'settings.update'] },
  { method: 'DELETE', path: '/notifications/channels/{name}', permissions: ['settings.update'] },
  { method: 'POST', path: '/notifications/rules', permissions: ['settings.view', 'settings.update'] },
  { method: 'PUT', path: '/notifications/rules/{name}', permissions: ['settings.view', 'settings.update'] },
  { method: 'DELETE', path: '/notifications/rules/{name}', permissions: ['settings.update'] },
  // Inventory sources (docs/inventory.md).
  { method: 'GET', path: '/inventory-sources', permissions: ['inventory.view'] },
  { method: 'GET', path: '/inventory-sources/{source_id}', permissions: ['inventory.view'] },
  { method: 'POST', path: '/inventory-sources', permissions: ['inventory.manage'] },
  { method: 'PUT', path: '/inventory-sources/{source_id}', permissions: ['inventory.manage'] },
  { method: 'DELETE', path: '/inventory-sources/{source_id}', permissions: ['inventory.manage'] },
  { method: 'POST', path: '/inventory-sources/{source_id}/sync', permissions: ['inventory.view', 'inventory.sync'] },
  // Remote collectors (docs/collectors.md).
  { method: 'GET', path: '/collectors', permissions: ['collectors.view'] },
  { method: 'POST', path: '/collectors/tokens', permissions: ['collectors.view', 'collectors.manage'] },
  { method: 'GET', path: '/collectors/tokens', permissions: ['collectors.view', 'collectors.manage'] },
  { method: 'DELETE', path: '/collectors/tokens/{token_id}', permissions: ['collectors.view', 'collectors.manage'] },
  { method: 'POST', path: '/collectors/{collector_id}/revoke', permissions: ['collectors.view', 'collectors.manage'] },
  { method: 'PUT', path: '/collectors/{collector_id}', permissions: ['collectors.view', 'collectors.manage'] },
];
