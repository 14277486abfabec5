// GET /metrics (Prometheus text format, an API key holding dashboard.view) and the HTTP request counting behind it.
import type { Hono, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv, AppServices } from '../http/context';
import { checkPermission } from '../http/middleware';
import { metricsOf } from '../features/metrics/metrics.service';
import { authenticate, refuseKeyInQuery } from './api-key-auth';

export const METRICS_PATH = '/metrics';

/**
 * Counts every request by its route pattern (`/api/v1/devices/:id`, never the raw path, which would carry names and
 * ids into labels); a request no route matched is "unmatched". Registered before the request envelope, so a
 * request the API's gate refuses is counted too.
 */
export function countRequests(app: AppServices): MiddlewareHandler<AppEnv> {
  const metrics = metricsOf(app.db);
  if (!metrics) return (_c, next) => next();
  return async (c, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const route = matchedRoutes(c).find((r) => r.method !== 'ALL')?.path ?? 'unmatched';
      metrics.observeRequest(c.req.method, route, c.res.status, (performance.now() - start) / 1000);
    }
  };
}

/**
 * The scrape endpoint. Outside /api/v1 (not part of the public API's OpenAPI document) but authenticated the same
 * way: the X-API-Key header only, never a session cookie, and the key must hold dashboard.view.
 */
export function registerMetricsRoute(root: Hono<AppEnv>): void {
  root.get(METRICS_PATH, async (c) => {
    refuseKeyInQuery(c);
    authenticate(c);
    checkPermission(c, 'dashboard.view');
    const metrics = metricsOf(c.get('app').db);
    if (!metrics) return c.text('metrics are not enabled in this process\n', 503);
    const text = await metrics.registry.metrics();
    return c.body(text, 200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
  });
}
