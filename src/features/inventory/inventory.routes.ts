// Public API routes of inventory sources (docs/inventory.md): list, read, add, change, remove, and sync with a dry run.
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import type { z } from '@hono/zod-openapi';
import { formatNullable } from '../../lib/time';
import { errorResponses, jsonBody, jsonResponse, SuccessStatusSchema } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { destinationPolicy } from '../notifications/notifications.service';
import { syncSource } from './inventory-sync.service';
import { INVENTORY_OPS } from './inventory.policy';
import { PlanSchema, SourceIdParams, SourceInputSchema, SourceListSchema, SourcePatchSchema, SourceSchema, SyncBody, SyncQuery } from './inventory.schemas';
import { createSource, deleteSource, getSource, listSources, updateSource, type SourceInfo } from './inventory.service';

const tags = ['Inventory sources'];
const security = [{ ApiKeyAuth: [] }];
const BASE = '/inventory-sources';
const ONE = `${BASE}/{source_id}`;
const MANAGE =
  'The URL must be inside `[notifications] allowed_destinations` (422 naming `url`); the key’s user needs device-group scope "all". ' +
  'Permission: `inventory.manage`.';

/** The response DTO of a source: its times in the reader's zone, never its token. */
function toSourceDto(s: SourceInfo, tz: string): z.infer<typeof SourceSchema> {
  return { ...s, last_sync_at: formatNullable(s.last_sync_at, tz) };
}

const routes = {
  list: createRoute({
    method: 'get',
    path: BASE,
    operationId: 'listInventorySources',
    tags,
    security,
    summary: 'List inventory sources',
    description:
      'Every source, its mapping, filters, schedule and last sync; `has_token` says whether it holds a token (never returned). Permission: `inventory.view`.',
    middleware: [requirePermission(INVENTORY_OPS.view)] as const,
    responses: { 200: jsonResponse(SourceListSchema, 'The sources'), ...errorResponses('PERMISSION_DENIED') },
  }),
  get: createRoute({
    method: 'get',
    path: ONE,
    operationId: 'getInventorySource',
    tags,
    security,
    summary: 'Read an inventory source',
    description: 'Permission: `inventory.view`.',
    middleware: [requirePermission(INVENTORY_OPS.view)] as const,
    request: { params: SourceIdParams },
    responses: { 200: jsonResponse(SourceSchema, 'The source'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
  create: createRoute({
    method: 'post',
    path: BASE,
    operationId: 'createInventorySource',
    tags,
    security,
    summary: 'Add an inventory source',
    description: `A NetBox, Nautobot or HTTP JSON (Oxidized layout) source of devices. A name in use: 409. ${MANAGE}`,
    middleware: [requirePermission(INVENTORY_OPS.create)] as const,
    request: { body: jsonBody(SourceInputSchema) },
    responses: {
      201: jsonResponse(SourceSchema, 'The source, without its token'),
      ...errorResponses('PERMISSION_DENIED', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
  update: createRoute({
    method: 'put',
    path: ONE,
    operationId: 'updateInventorySource',
    tags,
    security,
    summary: 'Change an inventory source',
    description: `The given fields change (the name stays); \`token: null\` removes the token. ${MANAGE}`,
    middleware: [requirePermission(INVENTORY_OPS.update)] as const,
    request: { params: SourceIdParams, body: jsonBody(SourcePatchSchema) },
    responses: {
      200: jsonResponse(SourceSchema, 'The source as changed'),
      ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
  delete: createRoute({
    method: 'delete',
    path: ONE,
    operationId: 'deleteInventorySource',
    tags,
    security,
    summary: 'Remove an inventory source',
    description: 'Its devices stay as they are (in service or retired) and are managed by hand from then on. Permission: `inventory.manage`.',
    middleware: [requirePermission(INVENTORY_OPS.delete)] as const,
    request: { params: SourceIdParams },
    responses: { 200: jsonResponse(SuccessStatusSchema, 'Deleted'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
  sync: createRoute({
    method: 'post',
    path: `${ONE}/sync`,
    operationId: 'syncInventorySource',
    tags,
    security,
    summary: 'Sync an inventory source (or preview it)',
    description:
      'Reads every page of the source and plans: devices to create, to update (a rename keeps the device, its id and history), to retire ' +
      '(vanished from the source: retired, never deleted) and to reactivate. `dry_run=true` returns the plan and writes nothing; otherwise ' +
      'the plan is applied in one transaction, audited through the door `inventory` naming the source. A source that cannot be read whole ' +
      '(refused destination, HTTP error, timeout, too large): 409, nothing changes. The body is `{}` (request bodies are JSON). Needs device-group scope "all". Permission: `inventory.view` and `inventory.sync`.',
    middleware: [requirePermission(INVENTORY_OPS.sync)] as const,
    request: { params: SourceIdParams, query: SyncQuery, body: jsonBody(SyncBody) },
    responses: {
      200: jsonResponse(PlanSchema, 'The plan (applied unless dry_run)'),
      ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
};

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, routes.list, (c) => c.json({ items: listSources(c.get('app').db, actorOf(c)).map((s) => toSourceDto(s, c.get('timezone'))) }, 200));
  registerRoute(api, routes.get, (c) => c.json(toSourceDto(getSource(c.get('app').db, actorOf(c), c.req.valid('param').source_id), c.get('timezone')), 200));
  registerRoute(api, routes.create, async (c) => {
    const app = c.get('app');
    const s = await createSource(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), c.req.valid('json'));
    return c.json(toSourceDto(s, c.get('timezone')), 201);
  });
  registerRoute(api, routes.update, async (c) => {
    const app = c.get('app');
    const s = await updateSource(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), c.req.valid('param').source_id, c.req.valid('json'));
    return c.json(toSourceDto(s, c.get('timezone')), 200);
  });
  registerRoute(api, routes.delete, (c) => {
    deleteSource(c.get('app').db, actorOf(c), c.req.valid('param').source_id);
    return c.json({ status: 'success' as const }, 200);
  });
  registerRoute(api, routes.sync, async (c) => {
    const app = c.get('app');
    const plan = await syncSource(
      app.db,
      actorOf(c),
      app.secrets,
      destinationPolicy(app.config),
      c.req.valid('param').source_id,
      c.req.valid('query').dry_run === true,
    );
    return c.json(plan, 200);
  });
}
