// Who may see, change and sync inventory sources (docs/inventory.md), read by every door.
import { operation } from '../../identity/policy';

/** A source creates devices in any group with its own credential: changing or syncing one needs scope "all". */
const all = { scope: 'all' } as const;
const BASE = '/inventory-sources';

export const INVENTORY_OPS = {
  view: operation(
    'inventory.view',
    ['inventory.view'],
    { scope: 'none' },
    { api: [`GET ${BASE}`, `GET ${BASE}/{source_id}`], web: ['GET /inventory'], cli: 'inventory list' },
  ),
  create: operation('inventory.create', ['inventory.manage'], all, { api: `POST ${BASE}`, cli: 'inventory add' }),
  update: operation('inventory.update', ['inventory.manage'], all, { api: `PUT ${BASE}/{source_id}` }),
  delete: operation('inventory.delete', ['inventory.manage'], all, { api: `DELETE ${BASE}/{source_id}`, cli: 'inventory remove' }),
  sync: operation('inventory.sync', ['inventory.view', 'inventory.sync'], all, {
    api: `POST ${BASE}/{source_id}/sync`,
    web: ['POST /inventory/:id/preview', 'POST /inventory/:id/sync'],
    cli: 'inventory sync',
  }),
} as const;
