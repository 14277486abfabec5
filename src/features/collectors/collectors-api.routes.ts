// Public API route of remote collectors: the list (read-only; tokens, revocation and zones stay on the web and CLI).
import { createRoute, type OpenAPIHono, type z } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { errorResponses, jsonResponse } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { formatNullable, formatTimestamp } from '../../lib/time';
import { COLLECTOR_OPS } from './collectors.policy';
import { CollectorListSchema, CollectorSchema } from './collectors.schemas';
import { listCollectors, type CollectorView } from './collectors.service';

const list = createRoute({
  method: 'get',
  path: '/collectors',
  operationId: 'listCollectors',
  tags: ['Collectors'],
  security: [{ ApiKeyAuth: [] }],
  summary: 'List remote collectors',
  description: 'Each enrolled collector: zone, version, last seen, state, its zone’s queue and results delivered. Permission: `collectors.view`.',
  middleware: [requirePermission(COLLECTOR_OPS.list)] as const,
  responses: { 200: jsonResponse(CollectorListSchema, 'The collectors'), ...errorResponses('PERMISSION_DENIED') },
});

/** The response DTO: times in the reader's zone. */
function toCollectorDto(c: CollectorView, tz: string): z.infer<typeof CollectorSchema> {
  return {
    id: c.id,
    name: c.name,
    zone: c.zone,
    version: c.version,
    enrolled_at: formatTimestamp(c.enrolled_at, tz),
    last_seen_at: formatNullable(c.last_seen_at, tz),
    state: c.state,
    queued: c.queued,
    leased: c.leased,
    stored_last_hour: c.stored_last_hour,
    stored_total: c.stored_total,
  };
}

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, list, (c) => {
    const app = c.get('app');
    const items = listCollectors(app.db, actorOf(c), app.config.collector.offline_after * 1000);
    return c.json({ items: items.map((k) => toCollectorDto(k, c.get('timezone'))) }, 200);
  });
}
