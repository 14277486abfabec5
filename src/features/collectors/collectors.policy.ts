// Who may do what with remote collectors: each operation's permissions, read by the web page, the CLI and the service.
import { operation } from '../../identity/policy';

/** Managing collectors reaches every device of a zone, whatever its group: scope "all" only. */
const manage = { scope: 'all' } as const;
/** Managing is done from the list (the web form re-draws it), so it needs the view too, as inventory.sync does. */
const MANAGE = ['collectors.view', 'collectors.manage'] as const;

export const COLLECTOR_OPS = {
  list: operation('collectors.list', ['collectors.view'], { scope: 'none' }, { api: 'GET /collectors', web: ['GET /collectors'], cli: 'collector list' }),
  createToken: operation('collectors.token_create', MANAGE, manage, { web: ['POST /collectors/tokens'], cli: 'collector token create' }),
  revoke: operation('collectors.revoke', MANAGE, manage, { web: ['POST /collectors/:name/revoke'], cli: 'collector revoke' }),
  zone: operation('collectors.zone', MANAGE, manage, { cli: 'collector zone' }),
} as const;
