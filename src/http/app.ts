// The HTTP application: request id and access log for everything, /healthz, the public API, the web interface.
import { Hono } from 'hono';
import { ApiError } from '../errors';
import { API_PREFIX, createApiV1 } from './api-v1';
import type { AppEnv, AppServices } from './context';
import { errorResponse, toApiError } from './errors';
import { requestEnvelope } from './middleware';
import { RememberingRouter } from './router';
import { createWeb } from '../web/web';

export function createApp(app: AppServices): Hono<AppEnv> {
  const root = new Hono<AppEnv>({ router: new RememberingRouter() });
  const api = createApiV1(app);
  root.use('*', requestEnvelope(app, { prefix: API_PREFIX, gate: api.gate }));

  const ping = app.db.prepare('SELECT 1');
  root.get('/healthz', (c) => {
    ping.get();
    return c.json({ status: 'ok' });
  });

  root.route(API_PREFIX, api.routes);
  root.route('/', createWeb(app));

  root.notFound((c) => {
    if (c.req.path.startsWith('/api/')) return errorResponse(c, new ApiError('ROUTE_NOT_FOUND', `No endpoint ${c.req.method} ${c.req.path}`));
    return c.text('Not found', 404);
  });
  root.onError((err, c) => errorResponse(c, toApiError(c, err)));
  return root;
}
