// Public API v1 backup-template endpoints: list, read (permission only, spec 4.6 rule 4), create, update, delete (scope rules of issue #9).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv, type AppServices } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { TEMPLATE_OPS } from './templates.policy';
import { IntIdParam, SuccessStatusSchema, errorResponses, errorResponsesWithRefusals, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { TemplateCreateSchema, TemplateListQuery, TemplatePageSchema, TemplateSchema, TemplateUpdateSchema, toTemplateDto } from './templates.schemas';
import { createTemplate, deleteTemplate, getTemplateFor, listTemplatesFor, updateTemplate } from './templates.service';
import { registerRoute } from '../../http/route';

const tags = ['Backup templates'];
const security = [{ ApiKeyAuth: [] }];
const params = z.object({ template_id: IntIdParam('template_id').openapi({ description: 'Template id' }) });

const UPDATE_REFUSALS =
  "Also `PERMISSION_DENIED` when the caller's device-group scope is not `all` and the change touches what the template sends " +
  '(`commands`, `pre_commands`, `enable`, `exit_command`), or the template is used by a device outside that scope; ' +
  'and when such a change is made by a caller without `credentials.view` (the enable exchange hands the enable secret to what the template sends).';
const DELETE_REFUSALS = "Also `PERMISSION_DENIED` when the caller's device-group scope is not `all` and the template is used by a device outside that scope.";

const listRoute = createRoute({
  method: 'get',
  path: '/templates',
  operationId: 'listTemplates',
  tags,
  summary: 'List backup templates',
  description: 'Built-in and custom templates ordered by id, paged, with optional filters.',
  security,
  middleware: [requirePermission(TEMPLATE_OPS.list)] as const,
  request: { query: TemplateListQuery },
  responses: {
    200: jsonResponse(TemplatePageSchema, 'One page of templates'),
    ...errorResponses('PERMISSION_DENIED'),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/templates/{template_id}',
  operationId: 'getTemplate',
  tags,
  summary: 'Read a backup template',
  security,
  middleware: [requirePermission(TEMPLATE_OPS.get)] as const,
  request: { params },
  responses: {
    200: jsonResponse(TemplateSchema, 'The template'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND'),
  },
});

const createTemplateRoute = createRoute({
  method: 'post',
  path: '/templates',
  operationId: 'createTemplate',
  tags,
  summary: 'Create a custom backup template',
  description:
    'Patterns are checked before saving: each must compile, must not nest unbounded repeats (catastrophic backtracking), ' +
    'strip/ignore patterns must not match every line and redact patterns must not match the empty string. ' +
    'Each problem is one entry of `error.details.errors`, e.g. `{ "field": "strip_patterns.2", "message": "..." }`.',
  security,
  middleware: [requirePermission(TEMPLATE_OPS.create)] as const,
  request: { body: jsonBody(TemplateCreateSchema) },
  responses: {
    201: jsonResponse(TemplateSchema, 'The created template'),
    ...errorResponses('PERMISSION_DENIED', 'TEMPLATE_NAME_EXISTS', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const updateRoute = createRoute({
  method: 'put',
  path: '/templates/{template_id}',
  operationId: 'updateTemplate',
  tags,
  summary: 'Update a custom backup template',
  description:
    'Changes the given fields; the result is validated like a new template. Built-ins are read-only (409), and so are templates loaded from ' +
    'files in <data_dir>/templates/ (409 `CONFLICT` naming the file: edit the file and reload). ' +
    '**Scope rule:** the commands a template sends run on every device using it, so changing `commands`, `pre_commands`, ' +
    '`enable` or `exit_command`, ' +
    "or changing a template used by any device outside the caller's device-group scope, needs scope `all` (403 `PERMISSION_DENIED` naming the reason). " +
    'Changing what a template sends also needs `credentials.view`: the enable exchange hands the enable secret to it.',
  security,
  middleware: [requirePermission(TEMPLATE_OPS.update)] as const,
  request: { params, body: jsonBody(TemplateUpdateSchema) },
  responses: {
    200: jsonResponse(TemplateSchema, 'The updated template'),
    ...errorResponsesWithRefusals(
      UPDATE_REFUSALS,
      'RESOURCE_NOT_FOUND',
      'TEMPLATE_NAME_EXISTS',
      'TEMPLATE_BUILTIN_READONLY',
      'CONFLICT',
      'UNSUPPORTED_MEDIA_TYPE',
      'PAYLOAD_TOO_LARGE',
    ),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/templates/{template_id}',
  operationId: 'deleteTemplate',
  tags,
  summary: 'Delete a custom backup template',
  description:
    'Built-ins cannot be deleted, nor templates loaded from files (409 `CONFLICT`: remove the file and reload); a template used by a device cannot be deleted. Backup records keep their history. ' +
    "**Scope rule:** a template used by any device outside the caller's device-group scope can be deleted only with scope `all` " +
    '(403 `PERMISSION_DENIED`, checked before `TEMPLATE_IN_USE`).',
  security,
  middleware: [requirePermission(TEMPLATE_OPS.delete)] as const,
  request: { params },
  responses: {
    200: jsonResponse(SuccessStatusSchema, 'Deleted'),
    ...errorResponsesWithRefusals(DELETE_REFUSALS, 'RESOURCE_NOT_FOUND', 'TEMPLATE_BUILTIN_READONLY', 'CONFLICT', 'TEMPLATE_IN_USE'),
  },
});

export function register(api: OpenAPIHono<AppEnv>, app: AppServices): void {
  registerRoute(api, listRoute, (c) => {
    const query = c.req.valid('query');
    const { items, total } = listTemplatesFor(app.db, c.get('principal'), query);
    const tz = c.get('timezone');
    return c.json({ items: items.map((t) => toTemplateDto(t, tz)), pagination: pagination(query.page, query.limit, total) }, 200);
  });

  registerRoute(api, getRoute, (c) => {
    const { template_id } = c.req.valid('param');
    return c.json(toTemplateDto(getTemplateFor(app.db, c.get('principal'), template_id), c.get('timezone')), 200);
  });

  registerRoute(api, createTemplateRoute, (c) => {
    const created = createTemplate(app.db, actorOf(c), c.req.valid('json'));
    return c.json(toTemplateDto(created, c.get('timezone')), 201);
  });

  registerRoute(api, updateRoute, (c) => {
    const { template_id } = c.req.valid('param');
    const updated = updateTemplate(app.db, actorOf(c), template_id, c.req.valid('json'));
    return c.json(toTemplateDto(updated, c.get('timezone')), 200);
  });

  registerRoute(api, deleteRoute, (c) => {
    const { template_id } = c.req.valid('param');
    deleteTemplate(app.db, actorOf(c), template_id);
    return c.json({ status: 'success' as const }, 200);
  });
}
