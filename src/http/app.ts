// The HTTP application: request id and access log for everything, /healthz, the public API, the web interface.
import { Hono } from 'hono';
import { ApiError } from '../errors';
import { createApiV1 } from './api-v1';
import type { AppEnv, AppServices } from './context';
import { errorResponse, toApiError } from './errors';
import { requestEnvelope } from './middleware';
import { createWeb } from '../web/web';

export function createApp(app: AppServices): Hono<AppEnv> {
  const root = new Hono<AppEnv>();
  root.use('*', requestEnvelope(app));

  const ping = app.db.prepare('SELECT 1');
  root.get('/healthz', (c) => {
    ping.get();
    return c.json({ status: 'ok' });
  });

  root.route('/api/v1', createApiV1(app));
  root.route('/', createWeb(app));

  root.notFound((c) => {
    if (c.req.path.startsWith('/api/')) return errorResponse(c, new ApiError('ROUTE_NOT_FOUND', `No endpoint ${c.req.method} ${c.req.path}`));
    return c.text('Not found', 404);
  });
  root.onError((err, c) => errorResponse(c, toApiError(c, err)));
  return root;
}
