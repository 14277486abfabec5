// The public API under /api/v1: authentication by X-API-Key, the route modules of each feature, the OpenAPI document.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors';
import type { AppEnv, AppServices } from '../http/context';
import { readJsonBody, setRequestTimezone } from '../http/middleware';
import { authenticate, refuseKeyInQuery } from './api-key-auth';
import { API_ROUTE_MODULES } from './api-v1.routes';
import { registerDocs } from './docs';

/** Paths under /api/v1 reachable without a key: the interface description itself. */
const PUBLIC_PATHS = new Set(['/api/v1/openapi.json', '/api/v1/docs', '/api/v1/docs/']);

/**
 * The checks of a request before its route: no key in the URL (even on the public paths: a key in a URL is a leak
 * the caller must learn about), the key's principal, the time zone.
 */
function checkRequestHead(c: Context<AppEnv>): void {
  refuseKeyInQuery(c);
  if (!PUBLIC_PATHS.has(c.req.path) && !c.req.path.startsWith('/api/v1/docs/')) authenticate(c);
  setRequestTimezone(c);
}

const hasBody = (method: string) => method === 'POST' || method === 'PUT' || method === 'PATCH';

export const API_PREFIX = '/api/v1';

export interface ApiV1 {
  routes: OpenAPIHono<AppEnv>;
  /** The checks of every request under API_PREFIX before its route; the request envelope runs them (middleware.ts). */
  gate: MiddlewareHandler<AppEnv>;
}

export function createApiV1(app: AppServices): ApiV1 {
  // Routes are registered with registerRoute (route.ts), which validates requests itself.
  const api = new OpenAPIHono<AppEnv>();
  const limitBody = bodyLimit({
    maxSize: app.config.server.max_body_bytes,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${app.config.server.max_body_bytes} bytes`);
    },
  });
  // Only requests that carry a body pay for the size limit (it wraps the request body stream) and for reading it:
  // it must be well-formed JSON whatever the route (422).
  const gate: MiddlewareHandler<AppEnv> = (c, next) => {
    if (!hasBody(c.req.method)) {
      checkRequestHead(c);
      return next();
    }
    return limitBody(c, async () => {
      checkRequestHead(c);
      await readJsonBody(c);
      await next();
    });
  };

  api.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An API key (`cv_…`) created on the API Key page or with `confvault apikey create`. Never in the URL.',
  });
  for (const mod of API_ROUTE_MODULES) mod.register(api, app);
  // After the route modules: the document describes every route registered before it.
  registerDocs(api, app);

  // No notFound or onError of its own: the root app answers both in the API's error body (app.ts), and Hono wraps
  // every handler of a mounted app that has its own error handler in one more asynchronous step.
  return { routes: api, gate };
}
