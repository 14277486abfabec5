// GET /metrics (Prometheus text format, an API key holding dashboard.view) and the HTTP request counting behind it.
import type { Hono } from 'hono';
import type { AppEnv, AppServices } from '../http/context';
import { checkPermission } from '../http/middleware';
import { metricsOf } from '../features/metrics/metrics.service';
import { authenticate, refuseKeyInQuery } from './api-key-auth';

export const METRICS_PATH = '/metrics';

/**
 * What the request envelope reports of each finished request, for the HTTP metrics: labelled by route pattern, never
 * by raw path (no ids in labels); "unmatched" when no route answered. Undefined when metrics are off.
 */
export function requestObserver(app: AppServices): ((method: string, route: string, status: number, seconds: number) => void) | undefined {
  const metrics = metricsOf(app.db);
  return metrics ? (method, route, status, seconds) => metrics.observeRequest(method, route, status, seconds) : undefined;
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
