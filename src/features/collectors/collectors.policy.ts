// Who may do what with remote collectors: each operation's permissions, read by the web page, the CLI, the API and the service.
import { operation } from '../../identity/policy';

/** Managing collectors reaches every device of a zone, whatever its group: scope "all" only. */
const manage = { scope: 'all' } as const;
/** Managing is done from the list (the web form re-draws it), so it needs the view too, as inventory.sync does. */
const MANAGE = ['collectors.view', 'collectors.manage'] as const;

export const COLLECTOR_OPS = {
  list: operation('collectors.list', ['collectors.view'], { scope: 'none' }, { api: 'GET /collectors', web: ['GET /collectors'], cli: 'collector list' }),
  createToken: operation('collectors.token_create', MANAGE, manage, {
    api: 'POST /collectors/tokens',
    web: ['POST /collectors/tokens'],
    cli: 'collector token create',
  }),
  listTokens: operation('collectors.token_list', MANAGE, manage, { api: 'GET /collectors/tokens', cli: 'collector token list' }),
  revokeToken: operation('collectors.token_revoke', MANAGE, manage, {
    api: 'DELETE /collectors/tokens/{token_id}',
    web: ['POST /collectors/tokens/:id/revoke'],
    cli: 'collector token revoke',
  }),
  revoke: operation('collectors.revoke', MANAGE, manage, {
    api: 'POST /collectors/{collector_id}/revoke',
    web: ['POST /collectors/:name/revoke'],
    cli: 'collector revoke',
  }),
  /** A collector's zone, and the zone of a device or group (also through the device and group writes, when it changes). */
  zone: operation('collectors.zone', MANAGE, manage, { api: 'PUT /collectors/{collector_id}', cli: 'collector zone' }),
} as const;
