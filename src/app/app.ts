// The HTTP application: request id and access log for everything, /healthz, the public API, the web interface.
import { Hono } from 'hono';
import { ApiError } from '../errors';
import { API_PREFIX, createApiV1 } from './api-v1';
import type { AppEnv, AppServices } from '../http/context';
import { errorResponse, toApiError } from '../http/errors';
import { MethodTable } from '../http/methods';
import { requestEnvelope } from '../http/middleware';
import { createWeb } from '../web/web';
import { registerMetricsRoute, requestObserver } from './metrics.routes';
import { storageHealth } from '../features/maintenance/storage-health';
import { checkDatabaseAnswers } from '../features/maintenance/maintenance.service';
import { createCollectorRoutes } from '../features/collectors/collectors.routes';
import { PROTOCOL_PREFIX } from '../lib/collector-protocol';
import { replicationHealth } from '../features/replication/replication.service';

export function createApp(app: AppServices): Hono<AppEnv> {
  const root = new Hono<AppEnv>();
  const api = createApiV1(app);
  const methods = new MethodTable();
  // One middleware step for every request: the envelope also reports each finished request to the metrics.
  root.use('*', requestEnvelope(app, { prefix: API_PREFIX, gate: api.gate, methods }, requestObserver(app)));

  // 503 with what is wrong when storage is in trouble, so a load balancer or watchdog can act; reads keep working.
  root.get('/healthz', (c) => {
    checkDatabaseAnswers(app.db);
    const storage = storageHealth(app.db, app.dataDir, app.config.storage.min_free_mb);
    // Reported, not a 503: a replica out of reach does not stop this appliance from serving and backing up.
    const replication = replicationHealth(app.dataDir, app.config.replication.enabled);
    if (storage.ok) return c.json({ status: 'ok', ...(replication ? { replication } : {}) });
    return c.json({ status: 'storage_trouble', storage, ...(replication ? { replication } : {}) }, 503);
  });

  registerMetricsRoute(root);
  root.route(API_PREFIX, api.routes);
  // Remote collectors' internal protocol (docs/collectors.md): signed requests, outside the public API.
  root.route(PROTOCOL_PREFIX, createCollectorRoutes(app));
  root.route('/', createWeb(app));

  root.notFound((c) => {
    if (c.req.path.startsWith('/api/')) {
      // A known path asked with another method (a GET of a POST-only path; other methods are refused before the gate).
      const refused = methods.refusal(c.req.method, c.req.path);
      if (refused) return errorResponse(c, refused);
      return errorResponse(c, new ApiError('ROUTE_NOT_FOUND', `No endpoint ${c.req.method} ${c.req.path.slice(0, 200)}`));
    }
    return c.text('Not found', 404);
  });
  root.onError((err, c) => errorResponse(c, toApiError(c, err)));
  // Every route is registered now: the table of methods per path can be read.
  methods.load(root.routes);
  return root;
}
