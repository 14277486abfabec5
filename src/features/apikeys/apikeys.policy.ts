// Who may do what with API keys: each operation's permissions and ownership rule, read by every door.
import { operation } from '../../identity/policy';

const grant = { scope: 'none', ownership: 'grant' } as const;

export const APIKEY_OPS = {
  list: operation('api_keys.list', ['api_keys.view'], { scope: 'none', ownership: 'own' }, { web: ['GET /api-keys'], cli: 'apikey list' }),
  create: operation('api_keys.create', ['api_keys.create'], grant, { web: ['POST /api-keys'], cli: 'apikey create' }),
  revoke: operation('api_keys.revoke', ['api_keys.delete'], grant, { web: ['POST /api-keys/:id/revoke'], cli: 'apikey revoke' }),
} as const;
