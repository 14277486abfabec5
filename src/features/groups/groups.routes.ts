// Public API routes for device groups: list, tree, detail, create, update, delete (reads by permission, spec 4.6 rule 4; changes kept inside the caller's scope).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { GROUP_OPS } from './groups.policy';
import { IntIdParam, SuccessStatusSchema, errorResponses, errorResponsesWithRefusals, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { GroupCreateSchema, GroupListQuerySchema, GroupPageSchema, GroupSchema, GroupTreeSchema, GroupUpdateSchema, toGroupDto } from './groups.schemas';
import { createGroup, deleteGroup, getGroupFor, getGroupTreeFor, listGroupsFor, updateGroup } from './groups.service';
import { registerRoute } from '../../http/route';

const tags = ['Groups'];
const security = [{ ApiKeyAuth: [] }];
const GroupIdParams = z.object({ group_id: IntIdParam('group_id') });
const SCOPE_NOTE =
  'Groups are read by permission only: a key whose user has a limited device-group scope still sees every group; ' +
  'only `device_count` is limited to the devices inside that scope.';
/** Changes stay inside the scope (issue #9): otherwise moving an outside group under one's own would widen it. */
const CHANGE_SCOPE_NOTE =
  ' **Scope rule:** for a user whose device-group scope is limited, the group changed and its (new) parent must both lie inside ' +
  'that scope, and only scope `all` can create or move a group at the top level; a refusal is 403 `PERMISSION_DENIED` naming the reason.';

const REFUSALS =
  "Also `PERMISSION_DENIED` when the caller's device-group scope is limited and the group or its (new) parent lies outside it, " +
  'or the group would be at the top level.';

const listRoute = createRoute({
  method: 'get',
  path: '/groups',
  operationId: 'listGroups',
  tags,
  summary: 'List groups',
  description: `Paged list of device groups in id order, each with its path and the number of devices in it and its subgroups. ${SCOPE_NOTE}`,
  security,
  middleware: [requirePermission(GROUP_OPS.list)] as const,
  request: { query: GroupListQuerySchema },
  responses: { 200: jsonResponse(GroupPageSchema, 'One page of groups'), ...errorResponses('PERMISSION_DENIED') },
});

const treeRoute = createRoute({
  method: 'get',
  path: '/groups/tree',
  operationId: 'getGroupTree',
  tags,
  summary: 'Group hierarchy',
  description: `The whole hierarchy as nested nodes, siblings ordered by name. Not paged: it is one document. ${SCOPE_NOTE}`,
  security,
  middleware: [requirePermission(GROUP_OPS.tree)] as const,
  responses: { 200: jsonResponse(GroupTreeSchema, 'The top-level groups with their subgroups'), ...errorResponses('PERMISSION_DENIED') },
});

const getRoute = createRoute({
  method: 'get',
  path: '/groups/{group_id}',
  operationId: 'getGroup',
  tags,
  summary: 'Get a group',
  security,
  middleware: [requirePermission(GROUP_OPS.get)] as const,
  request: { params: GroupIdParams },
  responses: { 200: jsonResponse(GroupSchema, 'The group'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const createGroupRoute = createRoute({
  method: 'post',
  path: '/groups',
  operationId: 'createGroup',
  tags,
  summary: 'Create a group',
  description:
    'A missing `parent_id` group is a 422 naming the field; a sibling with the same name (case-insensitive) is `GROUP_NAME_EXISTS`.' + CHANGE_SCOPE_NOTE,
  security,
  middleware: [requirePermission(GROUP_OPS.create)] as const,
  request: { body: jsonBody(GroupCreateSchema) },
  responses: {
    201: jsonResponse(GroupSchema, 'The created group'),
    ...errorResponsesWithRefusals(REFUSALS, 'GROUP_NAME_EXISTS', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const updateRoute = createRoute({
  method: 'put',
  path: '/groups/{group_id}',
  operationId: 'updateGroup',
  tags,
  summary: 'Update a group',
  description:
    'Partial update: only the fields in the body change (`{}` changes nothing). Changing `parent_id` moves the group with its ' +
    'subgroups and devices; moving it under itself or a descendant is `GROUP_PARENT_INVALID`.' +
    CHANGE_SCOPE_NOTE,
  security,
  middleware: [requirePermission(GROUP_OPS.update)] as const,
  request: { params: GroupIdParams, body: jsonBody(GroupUpdateSchema) },
  responses: {
    200: jsonResponse(GroupSchema, 'The updated group'),
    ...errorResponsesWithRefusals(REFUSALS, 'RESOURCE_NOT_FOUND', 'GROUP_NAME_EXISTS', 'GROUP_PARENT_INVALID', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/groups/{group_id}',
  operationId: 'deleteGroup',
  tags,
  summary: 'Delete a group',
  description: 'Only an empty group can be deleted: subgroups give `GROUP_HAS_CHILDREN`, devices directly in it `GROUP_HAS_DEVICES`.' + CHANGE_SCOPE_NOTE,
  security,
  middleware: [requirePermission(GROUP_OPS.delete)] as const,
  request: { params: GroupIdParams },
  responses: {
    200: jsonResponse(SuccessStatusSchema, 'The group was deleted'),
    ...errorResponsesWithRefusals(REFUSALS, 'RESOURCE_NOT_FOUND', 'GROUP_HAS_CHILDREN', 'GROUP_HAS_DEVICES'),
  },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, listRoute, (c) => {
    const { page, limit, q, parent_id } = c.req.valid('query');
    const { items, total } = listGroupsFor(c.get('app').db, c.get('principal'), { q, parent_id }, page, limit);
    const tz = c.get('timezone');
    return c.json({ items: items.map((g) => toGroupDto(g, tz)), pagination: pagination(page, limit, total) }, 200);
  });

  // Before /groups/{group_id}, which would otherwise take "tree" as an id.
  registerRoute(api, treeRoute, (c) => c.json(getGroupTreeFor(c.get('app').db, c.get('principal')), 200));

  registerRoute(api, getRoute, (c) => {
    const { group_id } = c.req.valid('param');
    return c.json(toGroupDto(getGroupFor(c.get('app').db, c.get('principal'), group_id), c.get('timezone')), 200);
  });

  registerRoute(api, createGroupRoute, (c) => {
    const group = createGroup(c.get('app').db, actorOf(c), c.req.valid('json'));
    return c.json(toGroupDto(group, c.get('timezone')), 201);
  });

  registerRoute(api, updateRoute, (c) => {
    const { group_id } = c.req.valid('param');
    const group = updateGroup(c.get('app').db, actorOf(c), group_id, c.req.valid('json'));
    return c.json(toGroupDto(group, c.get('timezone')), 200);
  });

  registerRoute(api, deleteRoute, (c) => {
    const { group_id } = c.req.valid('param');
    deleteGroup(c.get('app').db, actorOf(c), group_id);
    return c.json({ status: 'success' as const }, 200);
  });
}
