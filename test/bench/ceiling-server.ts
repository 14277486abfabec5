// Reference server in its own process: the ceiling (bare Hono hello-world on @hono/node-server); with `payload`, plain Hono
// answering the history path with a fixed page of the same size; with `framework`, the history route's zod-openapi definition, registered
// as the appliance registers its routes, answering that page.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { BackupHistoryPageSchema, BackupHistoryParams, BackupHistoryQuery, type BackupRecordDto } from '../../src/features/backups/backups.schemas';
import type { AppEnv } from '../../src/http/context';
import { jsonResponse, pagination } from '../../src/http/openapi';
import { registerRoute } from '../../src/http/route';
import { reportFatal, sendToParent } from './common';

function helloWorld(): Hono {
  const app = new Hono();
  app.get('/', (c) => c.text('Hello World!'));
  return app;
}

const item: BackupRecordDto = {
  id: '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10',
  started_at: '2025-03-01 02:00:04',
  finished_at: '2025-03-01 02:00:09',
  success: true,
  error_message: null,
  config_snapshot_hash: '9f2c1a7b3e5d4c6b8a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3',
};

/** What answering with a history page costs before any framework beyond Hono: the page, serialised and sent. */
function payloadOnly(): Hono {
  const app = new Hono();
  app.get('/api/v1/devices/:device_id/backups', (c) => c.json({ items: Array.from({ length: 10 }, () => item), pagination: pagination(1, 10, 100) }));
  return app;
}

function frameworkFloor(): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>();
  const route = createRoute({
    method: 'get',
    path: '/api/v1/devices/{device_id}/backups',
    request: { params: BackupHistoryParams, query: BackupHistoryQuery },
    responses: { 200: jsonResponse(BackupHistoryPageSchema, 'One page of backup records') },
  });
  registerRoute(api, route, (c) => {
    c.req.valid('param');
    const { page, limit } = c.req.valid('query');
    return c.json({ items: Array.from({ length: limit }, () => item), pagination: pagination(page, limit, 100) }, 200);
  });
  return api;
}

const app = process.argv[2] === 'framework' ? frameworkFloor() : process.argv[2] === 'payload' ? payloadOnly() : helloWorld();
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
  sendToParent({ url: `http://127.0.0.1:${info.port}` }).catch(reportFatal);
});
server.once('error', reportFatal);
process.once('SIGTERM', () => server.close(() => process.exit(0)));
