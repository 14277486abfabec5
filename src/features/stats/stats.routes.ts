// Public API route for system statistics (spec section 4: GET /stats, dashboard.view; permission only, spec 4.6 rule 4).
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { STATS_OPS } from './stats.policy';
import { errorResponses, jsonResponse } from '../../http/openapi';
import { StatisticsSchema, toStatisticsDto } from './stats.schemas';
import { getStatisticsFor } from './stats.service';
import { registerRoute } from '../../http/route';

const statsRoute = createRoute({
  method: 'get',
  path: '/stats',
  operationId: 'getStatistics',
  tags: ['Statistics'],
  summary: 'System statistics',
  description:
    'Counts of devices, groups, credentials and templates, backup outcomes of the last 24 hours, running backups and snapshot ' +
    'storage. Permission: `dashboard.view`, checked alone: the figures cover the whole appliance whatever the device-group ' +
    'scope of the key’s user.',
  security: [{ ApiKeyAuth: [] }],
  middleware: [requirePermission(STATS_OPS.dashboard)] as const,
  responses: { 200: jsonResponse(StatisticsSchema, 'The statistics'), ...errorResponses('PERMISSION_DENIED') },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, statsRoute, (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json(toStatisticsDto(getStatisticsFor(c.get('app').db, c.get('principal'))), 200);
  });
}
