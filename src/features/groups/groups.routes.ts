// Public API routes for device groups: list, tree, detail, create, update, delete (permission checks only, spec 4.6 rule 4).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { IntIdParam, SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import {
  GroupCreateSchema,
  GroupListQuerySchema,
  GroupPageSchema,
  GroupSchema,
  GroupTreeSchema,
  GroupUpdateSchema,
  toGroupDto,
} from './groups.schemas';
import { createGroup, deleteGroup, getGroup, getGroupTree, listGroups, updateGroup } from './groups.service';
import { registerRoute } from '../../http/route';

const tags = ['Groups'];
const security = [{ ApiKeyAuth: [] }];
const GroupIdParams = z.object({ group_id: IntIdParam('group_id') });
const SCOPE_NOTE =
  'Groups are checked by permission only: a key whose user has a limited device-group scope still sees and manages every group; ' +
  'only `device_count` is limited to the devices inside that scope.';

const listRoute = createRoute({
  method: 'get',
  path: '/groups',
  operationId: 'listGroups',
  tags,
  summary: 'List groups',
  description: `Paged list of device groups in id order, each with its path and the number of devices in it and its subgroups. ${SCOPE_NOTE}`,
  security,
  middleware: [requirePermission('groups.view')] as const,
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
  middleware: [requirePermission('groups.view')] as const,
  responses: { 200: jsonResponse(GroupTreeSchema, 'The top-level groups with their subgroups'), ...errorResponses('PERMISSION_DENIED') },
});

const getRoute = createRoute({
  method: 'get',
  path: '/groups/{group_id}',
  operationId: 'getGroup',
  tags,
  summary: 'Get a group',
  security,
  middleware: [requirePermission('groups.view')] as const,
  request: { params: GroupIdParams },
  responses: { 200: jsonResponse(GroupSchema, 'The group'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const createGroupRoute = createRoute({
  method: 'post',
  path: '/groups',
  operationId: 'createGroup',
  tags,
  summary: 'Create a group',
  description: 'A missing `parent_id` group is a 422 naming the field; a sibling with the same name (case-insensitive) is `GROUP_NAME_EXISTS`.',
  security,
  middleware: [requirePermission('groups.create')] as const,
  request: { body: jsonBody(GroupCreateSchema) },
  responses: {
    201: jsonResponse(GroupSchema, 'The created group'),
    ...errorResponses('PERMISSION_DENIED', 'GROUP_NAME_EXISTS', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
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
    'subgroups and devices; moving it under itself or a descendant is `GROUP_PARENT_INVALID`.',
  security,
  middleware: [requirePermission('groups.update')] as const,
  request: { params: GroupIdParams, body: jsonBody(GroupUpdateSchema) },
  responses: {
    200: jsonResponse(GroupSchema, 'The updated group'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'GROUP_NAME_EXISTS', 'GROUP_PARENT_INVALID', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/groups/{group_id}',
  operationId: 'deleteGroup',
  tags,
  summary: 'Delete a group',
  description: 'Only an empty group can be deleted: subgroups give `GROUP_HAS_CHILDREN`, devices directly in it `GROUP_HAS_DEVICES`.',
  security,
  middleware: [requirePermission('groups.delete')] as const,
  request: { params: GroupIdParams },
  responses: {
    200: jsonResponse(SuccessStatusSchema, 'The group was deleted'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'GROUP_HAS_CHILDREN', 'GROUP_HAS_DEVICES'),
  },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, listRoute, (c) => {
    const { page, limit, q, parent_id } = c.req.valid('query');
    const { items, total } = listGroups(c.get('app').db, c.get('principal').scope, { q, parent_id }, page, limit);
    const tz = c.get('timezone');
    return c.json({ items: items.map((g) => toGroupDto(g, tz)), pagination: pagination(page, limit, total) }, 200);
  });

  // Before /groups/{group_id}, which would otherwise take "tree" as an id.
  registerRoute(api, treeRoute, (c) => c.json(getGroupTree(c.get('app').db, c.get('principal').scope), 200));

  registerRoute(api, getRoute, (c) => {
    const { group_id } = c.req.valid('param');
    return c.json(toGroupDto(getGroup(c.get('app').db, c.get('principal').scope, group_id), c.get('timezone')), 200);
  });

  registerRoute(api, createGroupRoute, (c) => {
    const group = createGroup(c.get('app').db, c.get('principal').scope, c.req.valid('json'));
    return c.json(toGroupDto(group, c.get('timezone')), 201);
  });

  registerRoute(api, updateRoute, (c) => {
    const { group_id } = c.req.valid('param');
    const group = updateGroup(c.get('app').db, c.get('principal').scope, group_id, c.req.valid('json'));
    return c.json(toGroupDto(group, c.get('timezone')), 200);
  });

  registerRoute(api, deleteRoute, (c) => {
    const { group_id } = c.req.valid('param');
    deleteGroup(c.get('app').db, group_id);
    return c.json({ status: 'success' as const }, 200);
  });
}
