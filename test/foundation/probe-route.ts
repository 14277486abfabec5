// Loaded into `confvault serve` by tests (--import): an /api/v1 route guarded by devices.view that reports its caller,
// so tests can watch permission changes made from the CLI take effect on a running server, and one that fails.
import { API_ROUTE_MODULES } from '../../src/app/api-v1.routes';
import { requirePermission } from '../../src/http/middleware';
import { DEVICE_OPS } from '../../src/features/devices/devices.policy';

API_ROUTE_MODULES.push({
  register(api) {
    api.get('/test-probe', requirePermission(DEVICE_OPS.list), (c) => {
      const p = c.get('principal');
      return c.json({ username: p.username, role: p.roleName, api_key_id: p.apiKeyId });
    });
    api.get('/test-probe/fail', () => {
      throw new Error('internal detail: /srv/secret/path.ts:42 password=hunter2');
    });
  },
});
