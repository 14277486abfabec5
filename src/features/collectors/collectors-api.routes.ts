// Public API routes of remote collectors: the list, one-time enrolment tokens (create, list, revoke), revoking a
// collector and moving it to another zone. Guards from collectors.policy; the services are the CLI's and the web's.
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { EmptyBody, IntIdParam, SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { formatNullable, formatTimestamp } from '../../lib/time';
import { COLLECTOR_OPS } from './collectors.policy';
import {
  CollectorListQuerySchema,
  CollectorListSchema,
  CollectorSchema,
  CollectorUpdateSchema,
  EnrolTokenCreateSchema,
  EnrolTokenCreatedSchema,
  EnrolTokenPageSchema,
  EnrolTokenSchema,
  TokenIdParams,
} from './collectors.schemas';
import {
  createEnrolToken,
  getCollectorView,
  listEnrolTokens,
  pageCollectors,
  revokeCollector,
  revokeEnrolToken,
  setCollectorZone,
  type CollectorView,
  type EnrolTokenView,
} from './collectors.service';

const tags = ['Collectors'];
const security = [{ ApiKeyAuth: [] }];
const CollectorIdParams = z.object({ collector_id: IntIdParam('collector_id') });
const MANAGE = 'Permission: `collectors.view` and `collectors.manage`, with the device-group scope all (a zone spans groups). Audited.';

const list = createRoute({
  method: 'get',
  path: '/collectors',
  operationId: 'listCollectors',
  tags,
  security,
  summary: 'List remote collectors',
  description:
    'Each enrolled collector, by zone then name: zone, version, last seen, state, its zone’s queue and results delivered. Permission: `collectors.view`.',
  middleware: [requirePermission(COLLECTOR_OPS.list)] as const,
  request: { query: CollectorListQuerySchema },
  responses: { 200: jsonResponse(CollectorListSchema, 'One page of collectors'), ...errorResponses('PERMISSION_DENIED') },
});

const createToken = createRoute({
  method: 'post',
  path: '/collectors/tokens',
  operationId: 'createEnrolToken',
  tags,
  security,
  summary: 'Create a one-time enrolment token',
  description:
    'A token that enrols one collector of `zone` (`confvault collector enrol` at the site), valid `hours`. The answer is the only place ' +
    `the token is ever shown: only its hash is stored. ${MANAGE}`,
  middleware: [requirePermission(COLLECTOR_OPS.createToken)] as const,
  request: { body: jsonBody(EnrolTokenCreateSchema) },
  responses: {
    201: jsonResponse(EnrolTokenCreatedSchema, 'The token, shown this once'),
    ...errorResponses('PERMISSION_DENIED', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const listTokens = createRoute({
  method: 'get',
  path: '/collectors/tokens',
  operationId: 'listEnrolTokens',
  tags,
  security,
  summary: 'List enrolment tokens',
  description: `Enrolment tokens, newest first, with their state and the collector each enrolled; never the token itself. ${MANAGE.replace(' Audited.', '')}`,
  middleware: [requirePermission(COLLECTOR_OPS.listTokens)] as const,
  request: { query: CollectorListQuerySchema },
  responses: { 200: jsonResponse(EnrolTokenPageSchema, 'One page of tokens'), ...errorResponses('PERMISSION_DENIED') },
});

const revokeToken = createRoute({
  method: 'delete',
  path: '/collectors/tokens/{token_id}',
  operationId: 'revokeEnrolToken',
  tags,
  security,
  summary: 'Revoke an unused enrolment token',
  description: `The token is deleted and enrols nothing. A token that enrolled a collector already is 409 \`CONFLICT\`: revoke the collector. ${MANAGE}`,
  middleware: [requirePermission(COLLECTOR_OPS.revokeToken)] as const,
  request: { params: TokenIdParams },
  responses: {
    200: jsonResponse(SuccessStatusSchema, 'The token was revoked'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT'),
  },
});

const revoke = createRoute({
  method: 'post',
  path: '/collectors/{collector_id}/revoke',
  operationId: 'revokeCollector',
  tags,
  security,
  summary: 'Revoke a collector',
  description: `Its pinned key is refused from now on; the backups it leased return to the queue when their lease runs out. Revoking it again changes nothing. ${MANAGE}`,
  middleware: [requirePermission(COLLECTOR_OPS.revoke)] as const,
  request: { params: CollectorIdParams, body: jsonBody(EmptyBody) },
  responses: {
    200: jsonResponse(CollectorSchema, 'The revoked collector'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const update = createRoute({
  method: 'put',
  path: '/collectors/{collector_id}',
  operationId: 'updateCollector',
  tags,
  security,
  summary: 'Move a collector to another zone',
  description: `From its next lease on, the collector serves the devices of \`zone\`; leases it holds stay valid until they end. ${MANAGE}`,
  middleware: [requirePermission(COLLECTOR_OPS.zone)] as const,
  request: { params: CollectorIdParams, body: jsonBody(CollectorUpdateSchema) },
  responses: {
    200: jsonResponse(CollectorSchema, 'The collector'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
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

function toTokenDto(t: EnrolTokenView, tz: string): z.infer<typeof EnrolTokenSchema> {
  return { ...t, created_at: formatTimestamp(t.created_at, tz), expires_at: formatTimestamp(t.expires_at, tz), used_at: formatNullable(t.used_at, tz) };
}

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, list, (c) => {
    const app = c.get('app');
    const { page, limit } = c.req.valid('query');
    const { items, total } = pageCollectors(app.db, actorOf(c), app.config.collector.offline_after * 1000, page, limit);
    return c.json({ items: items.map((k) => toCollectorDto(k, c.get('timezone'))), pagination: pagination(page, limit, total) }, 200);
  });

  registerRoute(api, listTokens, (c) => {
    const { page, limit } = c.req.valid('query');
    const { items, total } = listEnrolTokens(c.get('app').db, actorOf(c), page, limit);
    return c.json({ items: items.map((t) => toTokenDto(t, c.get('timezone'))), pagination: pagination(page, limit, total) }, 200);
  });

  registerRoute(api, createToken, (c) => {
    const { zone, hours } = c.req.valid('json');
    const t = createEnrolToken(c.get('app').db, actorOf(c), zone, hours);
    return c.json({ id: t.id, zone, token: t.token, expires_at: formatTimestamp(t.expires_at, c.get('timezone')) }, 201);
  });

  registerRoute(api, revokeToken, (c) => {
    revokeEnrolToken(c.get('app').db, actorOf(c), c.req.valid('param').token_id);
    return c.json({ status: 'success' as const }, 200);
  });

  registerRoute(api, revoke, (c) => {
    const app = c.get('app');
    const actor = actorOf(c);
    const row = revokeCollector(app.db, actor, c.req.valid('param').collector_id);
    return c.json(toCollectorDto(getCollectorView(app.db, actor, row.id, app.config.collector.offline_after * 1000), c.get('timezone')), 200);
  });

  registerRoute(api, update, (c) => {
    const app = c.get('app');
    const actor = actorOf(c);
    const row = setCollectorZone(app.db, actor, c.req.valid('param').collector_id, c.req.valid('json').zone);
    return c.json(toCollectorDto(getCollectorView(app.db, actor, row.id, app.config.collector.offline_after * 1000), c.get('timezone')), 200);
  });
}
