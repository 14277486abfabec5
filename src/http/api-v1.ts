// The public API under /api/v1: authentication by X-API-Key, the route modules of each feature, the OpenAPI document.
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors';
import type { AppEnv, AppServices } from './context';
import { errorResponse, toApiError, validationHook } from './errors';
import { apiKeyAuth, refuseKeyInQuery, requestTimezone, requireJsonBody } from './middleware';
import { API_ROUTE_MODULES } from './api-v1.routes';
import { registerDocs } from './docs';

/** Paths under /api/v1 reachable without a key: the interface description itself. */
const PUBLIC_PATHS = new Set(['/api/v1/openapi.json', '/api/v1/docs', '/api/v1/docs/']);

export function createApiV1(app: AppServices): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const limitBody = bodyLimit({
    maxSize: app.config.server.max_body_bytes,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${app.config.server.max_body_bytes} bytes`);
    },
  });
  // Only requests that carry a body pay for the limit (it wraps the request body stream).
  api.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  // Even on the public paths: a key in a URL is a leak the caller must learn about.
  api.use('*', refuseKeyInQuery());
  api.use('*', async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path) || c.req.path.startsWith('/api/v1/docs/')) return next();
    return apiKeyAuth()(c, next);
  });
  api.use('*', requestTimezone());
  api.use('*', requireJsonBody());

  api.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An API key (`cv_…`) created on the API Key page or with `confvault apikey create`. Never in the URL.',
  });
  for (const mod of API_ROUTE_MODULES) mod.register(api, app);
  // After the route modules: the document describes every route registered before it.
  registerDocs(api, app);

  api.notFound((c) => errorResponse(c, new ApiError('ROUTE_NOT_FOUND', `No endpoint ${c.req.method} ${c.req.path}`)));
  api.onError((err, c) => errorResponse(c, toApiError(c, err)));
  return api;
}
