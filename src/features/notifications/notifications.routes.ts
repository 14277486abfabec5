// Public API routes of notification channels and rules: list, read, create, change, delete, with the web's rules (policy, destinations, ownership).
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ApiError } from '../../errors';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { errorResponses, jsonBody, jsonResponse, SuccessStatusSchema } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { NOTIFICATION_OPS } from './notifications.policy';
import {
  ChannelInputSchema,
  ChannelListSchema,
  ChannelSchema,
  ChannelUpdateSchema,
  NameParams,
  RuleInputSchema,
  RuleListSchema,
  RuleSchema,
  RuleUpdateSchema,
  toChannelDto,
  toRuleDto,
} from './notifications.schemas';
import { createChannel, createRule, destinationPolicy, listChannels, listRules, removeChannel, removeRule, updateRule } from './notifications.service';
import { updateChannel } from './notifications.update.service';

const tags = ['Notifications'];
const security = [{ ApiKeyAuth: [] }];
const CH = '/notifications/channels';
const RU = '/notifications/rules';
const deleted = jsonResponse(SuccessStatusSchema, 'Deleted');
const VIEW = 'Permission: `settings.view`.';

const routes = {
  listChannels: createRoute({
    method: 'get',
    path: CH,
    operationId: 'listNotificationChannels',
    tags,
    security,
    summary: 'List notification channels',
    description: `Every channel, its settings in clear and whether it holds a secret (secrets are never returned). ${VIEW}`,
    middleware: [requirePermission(NOTIFICATION_OPS.view)] as const,
    responses: { 200: jsonResponse(ChannelListSchema, 'The channels'), ...errorResponses('PERMISSION_DENIED') },
  }),
  getChannel: createRoute({
    method: 'get',
    path: `${CH}/{name}`,
    operationId: 'getNotificationChannel',
    tags,
    security,
    summary: 'Read a notification channel',
    description: `One channel by name. ${VIEW}`,
    middleware: [requirePermission(NOTIFICATION_OPS.view)] as const,
    request: { params: NameParams },
    responses: { 200: jsonResponse(ChannelSchema, 'The channel'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
  createChannel: createRoute({
    method: 'post',
    path: CH,
    operationId: 'createNotificationChannel',
    tags,
    security,
    summary: 'Add a notification channel',
    description:
      'A channel decides where the appliance connects: its destination must be inside `[notifications] allowed_destinations` (422 naming ' +
      'the field), and only a key whose user has device-group scope "all" adds one. A name in use: 409. Permission: `settings.view` and `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.addChannel)] as const,
    request: { body: jsonBody(ChannelInputSchema) },
    responses: {
      201: jsonResponse(ChannelSchema, 'The channel, without its secret'),
      ...errorResponses('PERMISSION_DENIED', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
  updateChannel: createRoute({
    method: 'put',
    path: `${CH}/{name}`,
    operationId: 'updateNotificationChannel',
    tags,
    security,
    summary: 'Change a notification channel',
    description:
      'Partial update: omitted fields keep their value, `secret` null clears it (it is never returned), the type cannot change. Checked as a ' +
      'new channel: each field (422 naming it), the destination against `[notifications] allowed_destinations` (422), device-group scope ' +
      '"all" (403); a new name in use: 409. Rules keep using the channel. Audited. Permission: `settings.view` and `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.updateChannel)] as const,
    request: { params: NameParams, body: jsonBody(ChannelUpdateSchema) },
    responses: {
      200: jsonResponse(ChannelSchema, 'The channel as changed, without its secret'),
      ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
  deleteChannel: createRoute({
    method: 'delete',
    path: `${CH}/{name}`,
    operationId: 'deleteNotificationChannel',
    tags,
    security,
    summary: 'Remove a notification channel',
    description: 'A scoped key may not remove a channel used by rules covering devices outside its scope (403). Permission: `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.removeChannel)] as const,
    request: { params: NameParams },
    responses: { 200: deleted, ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
  listRules: createRoute({
    method: 'get',
    path: RU,
    operationId: 'listNotificationRules',
    tags,
    security,
    summary: 'List notification rules',
    description: `Every rule: its events, channels and device groups. ${VIEW}`,
    middleware: [requirePermission(NOTIFICATION_OPS.view)] as const,
    responses: { 200: jsonResponse(RuleListSchema, 'The rules'), ...errorResponses('PERMISSION_DENIED') },
  }),
  getRule: createRoute({
    method: 'get',
    path: `${RU}/{name}`,
    operationId: 'getNotificationRule',
    tags,
    security,
    summary: 'Read a notification rule',
    description: `One rule by name. ${VIEW}`,
    middleware: [requirePermission(NOTIFICATION_OPS.view)] as const,
    request: { params: NameParams },
    responses: { 200: jsonResponse(RuleSchema, 'The rule'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
  createRule: createRoute({
    method: 'post',
    path: RU,
    operationId: 'createNotificationRule',
    tags,
    security,
    summary: 'Add a notification rule',
    description:
      'Which events go to which channels, for which device groups. A scoped key names groups inside its scope (a rule without groups needs ' +
      'scope "all"); `include_diff` needs `backups.view`. Permission: `settings.view` and `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.addRule)] as const,
    request: { body: jsonBody(RuleInputSchema) },
    responses: { 201: jsonResponse(RuleSchema, 'The rule'), ...errorResponses('PERMISSION_DENIED', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE') },
  }),
  updateRule: createRoute({
    method: 'put',
    path: `${RU}/{name}`,
    operationId: 'updateNotificationRule',
    tags,
    security,
    summary: 'Change a notification rule',
    description:
      'Replaces the rule’s events, channels, groups and `include_diff` (its name stays). The rule as it was and as it becomes must both lie ' +
      'inside the key’s scope. Permission: `settings.view` and `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.updateRule)] as const,
    request: { params: NameParams, body: jsonBody(RuleUpdateSchema) },
    responses: {
      200: jsonResponse(RuleSchema, 'The rule as changed'),
      ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
    },
  }),
  deleteRule: createRoute({
    method: 'delete',
    path: `${RU}/{name}`,
    operationId: 'deleteNotificationRule',
    tags,
    security,
    summary: 'Remove a notification rule',
    description: 'A scoped key removes only rules covering devices of its scope. Permission: `settings.update`.',
    middleware: [requirePermission(NOTIFICATION_OPS.removeRule)] as const,
    request: { params: NameParams },
    responses: { 200: deleted, ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
  }),
};

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, routes.listChannels, (c) => {
    const tz = c.get('timezone');
    return c.json({ items: listChannels(c.get('app').db, actorOf(c)).map((ch) => toChannelDto(ch, tz)) }, 200);
  });
  registerRoute(api, routes.getChannel, (c) => {
    const { name } = c.req.valid('param');
    const found = listChannels(c.get('app').db, actorOf(c)).find((ch) => ch.name === name);
    if (!found) throw ApiError.notFound(`Notification channel "${name}"`);
    return c.json(toChannelDto(found, c.get('timezone')), 200);
  });
  registerRoute(api, routes.createChannel, async (c) => {
    const app = c.get('app');
    const ch = await createChannel(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), c.req.valid('json'));
    return c.json(toChannelDto(ch, c.get('timezone')), 201);
  });
  registerRoute(api, routes.updateChannel, async (c) => {
    const app = c.get('app');
    const ch = await updateChannel(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), c.req.valid('param').name, c.req.valid('json'));
    return c.json(toChannelDto(ch, c.get('timezone')), 200);
  });
  registerRoute(api, routes.deleteChannel, (c) => {
    removeChannel(c.get('app').db, actorOf(c), c.req.valid('param').name);
    return c.json({ status: 'success' as const }, 200);
  });
  registerRoute(api, routes.listRules, (c) => c.json({ items: listRules(c.get('app').db, actorOf(c)).map(toRuleDto) }, 200));
  registerRoute(api, routes.getRule, (c) => {
    const { name } = c.req.valid('param');
    const found = listRules(c.get('app').db, actorOf(c)).find((r) => r.name === name);
    if (!found) throw ApiError.notFound(`Notification rule "${name}"`);
    return c.json(toRuleDto(found), 200);
  });
  registerRoute(api, routes.createRule, (c) => c.json(toRuleDto(createRule(c.get('app').db, actorOf(c), c.req.valid('json'))), 201));
  registerRoute(api, routes.updateRule, (c) => {
    const rule = updateRule(c.get('app').db, actorOf(c), c.req.valid('param').name, c.req.valid('json'));
    return c.json(toRuleDto(rule), 200);
  });
  registerRoute(api, routes.deleteRule, (c) => {
    removeRule(c.get('app').db, actorOf(c), c.req.valid('param').name);
    return c.json({ status: 'success' as const }, 200);
  });
}
