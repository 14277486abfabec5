// Who may do what with devices: each operation's permissions, scope and ownership rules, read by every door.
import { operation } from '../../identity/policy';

const groups = { scope: 'groups' } as const;

export const DEVICE_OPS = {
  list: operation('devices.list', ['devices.view'], groups, { api: 'GET /devices', web: ['GET /devices'], cli: 'device list' }),
  listUnreachable: operation('devices.list_unreachable', ['devices.view'], groups, { api: 'GET /devices/unreachable' }),
  get: operation('devices.get', ['devices.view'], groups, { api: 'GET /devices/{device_id}', web: ['GET /devices/:id'], cli: 'device show' }),
  export: operation('devices.export', ['devices.view'], groups, { web: ['GET /devices/export.csv'], cli: 'device export' }),
  create: operation(
    'devices.create',
    ['devices.create'],
    { scope: 'groups', ownership: 'credential' },
    { api: 'POST /devices', web: ['GET /devices/new', 'POST /devices'], cli: 'device add' },
  ),
  import: operation(
    'devices.import',
    ['devices.create'],
    { scope: 'groups', ownership: 'credential' },
    { web: ['GET /devices/import', 'POST /devices/import/preview', 'POST /devices/import'], cli: 'device import' },
  ),
  update: operation(
    'devices.update',
    ['devices.update'],
    { scope: 'groups', ownership: 'credential' },
    { api: 'PUT /devices/{device_id}', web: ['GET /devices/:id/edit', 'POST /devices/:id/edit'] },
  ),
  acceptHostKey: operation(
    'devices.accept_host_key',
    ['devices.update'],
    { scope: 'groups', ownership: 'credential' },
    { web: ['POST /devices/:id/host-key/accept'] },
  ),
  approveHold: operation('devices.approve_hold', ['devices.update'], { scope: 'groups', ownership: 'credential' }, { web: ['POST /devices/:id/hold/approve'] }),
  detect: operation(
    'devices.detect',
    ['devices.update'],
    { scope: 'groups', ownership: 'credential' },
    { web: ['POST /devices/:id/detect'], cli: 'device detect' },
  ),
  retire: operation('devices.retire', ['devices.update'], groups, {
    api: 'POST /devices/{device_id}/retire',
    web: ['POST /devices/:id/retire'],
    cli: 'device retire',
  }),
  reactivate: operation('devices.reactivate', ['devices.update'], groups, {
    api: 'POST /devices/{device_id}/reactivate',
    web: ['POST /devices/:id/reactivate'],
    cli: 'device reactivate',
  }),
  bulkEdit: operation(
    'devices.bulk_edit',
    ['devices.update'],
    { scope: 'groups', ownership: 'credential' },
    { web: ['POST /devices/bulk', 'POST /devices/bulk/apply'] },
  ),
  delete: operation('devices.delete', ['devices.delete'], groups, {
    api: 'DELETE /devices/{device_id}',
    web: ['GET /devices/:id/delete', 'POST /devices/:id/delete'],
    cli: 'device delete',
  }),
} as const;
