// Public API v1 credential endpoints: list, read, create, update, delete. Permission checks only (spec 4.6 rule 4).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv, type AppServices } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { CREDENTIAL_OPS } from './credentials.policy';
import { IntIdParam, SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import {
  CredentialCreateSchema,
  CredentialListQuery,
  CredentialPageSchema,
  CredentialSchema,
  CredentialUpdateSchema,
  toCredentialDto,
} from './credentials.schemas';
import { createCredential, deleteCredential, getCredentialFor, listCredentialsFor, updateCredential } from './credentials.service';
import { registerRoute } from '../../http/route';

const tags = ['Credentials'];
const security = [{ ApiKeyAuth: [] }];
const params = z.object({ credential_id: IntIdParam('credential_id').openapi({ description: 'Credential id' }) });

const listRoute = createRoute({
  method: 'get',
  path: '/credentials',
  operationId: 'listCredentials',
  tags,
  summary: 'List credentials',
  description: 'Credentials ordered by id, paged. Secrets are never returned, only `has_*` flags.',
  security,
  middleware: [requirePermission(CREDENTIAL_OPS.list)] as const,
  request: { query: CredentialListQuery },
  responses: {
    200: jsonResponse(CredentialPageSchema, 'One page of credentials'),
    ...errorResponses('PERMISSION_DENIED'),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/credentials/{credential_id}',
  operationId: 'getCredential',
  tags,
  summary: 'Read a credential',
  security,
  middleware: [requirePermission(CREDENTIAL_OPS.get)] as const,
  request: { params },
  responses: {
    200: jsonResponse(CredentialSchema, 'The credential'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND'),
  },
});

const createCredentialRoute = createRoute({
  method: 'post',
  path: '/credentials',
  operationId: 'createCredential',
  tags,
  summary: 'Create a credential',
  description:
    'Secrets are encrypted at rest and write-only. A private key is checked (it must parse and its passphrase must open it). ' +
    '`group_ids` sets where the credential may be used (see the schema); every change is written to the audit trail, secrets only as "changed".',
  security,
  middleware: [requirePermission(CREDENTIAL_OPS.create)] as const,
  request: { body: jsonBody(CredentialCreateSchema) },
  responses: {
    201: jsonResponse(CredentialSchema, 'The created credential'),
    ...errorResponses('PERMISSION_DENIED', 'CREDENTIAL_NAME_EXISTS', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const updateRoute = createRoute({
  method: 'put',
  path: '/credentials/{credential_id}',
  operationId: 'updateCredential',
  tags,
  summary: 'Update a credential',
  description:
    'Changes the given fields only. An omitted secret keeps the stored one; null clears it. Changing `group_ids` needs both the old and ' +
    'the new usage scope inside the caller’s device-group scope (403), and no device using the credential left outside it (409).',
  security,
  middleware: [requirePermission(CREDENTIAL_OPS.update)] as const,
  request: { params, body: jsonBody(CredentialUpdateSchema) },
  responses: {
    200: jsonResponse(CredentialSchema, 'The updated credential'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'CREDENTIAL_NAME_EXISTS', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/credentials/{credential_id}',
  operationId: 'deleteCredential',
  tags,
  summary: 'Delete a credential',
  description: 'Refused with `RESOURCE_CREDENTIAL_IN_USE` while any device uses the credential.',
  security,
  middleware: [requirePermission(CREDENTIAL_OPS.delete)] as const,
  request: { params },
  responses: {
    200: jsonResponse(SuccessStatusSchema, 'Deleted'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'RESOURCE_CREDENTIAL_IN_USE'),
  },
});

export function register(api: OpenAPIHono<AppEnv>, app: AppServices): void {
  registerRoute(api, listRoute, (c) => {
    const { page, limit, q } = c.req.valid('query');
    const { items, total } = listCredentialsFor(app.db, c.get('principal'), { page, limit, q });
    const tz = c.get('timezone');
    return c.json({ items: items.map((i) => toCredentialDto(i, tz)), pagination: pagination(page, limit, total) }, 200);
  });

  registerRoute(api, getRoute, (c) => {
    const { credential_id } = c.req.valid('param');
    return c.json(toCredentialDto(getCredentialFor(app.db, c.get('principal'), credential_id), c.get('timezone')), 200);
  });

  registerRoute(api, createCredentialRoute, (c) => {
    const created = createCredential(app.db, actorOf(c), app.secrets, c.req.valid('json'));
    return c.json(toCredentialDto(created, c.get('timezone')), 201);
  });

  registerRoute(api, updateRoute, (c) => {
    const { credential_id } = c.req.valid('param');
    const updated = updateCredential(app.db, actorOf(c), app.secrets, credential_id, c.req.valid('json'));
    return c.json(toCredentialDto(updated, c.get('timezone')), 200);
  });

  registerRoute(api, deleteRoute, (c) => {
    const { credential_id } = c.req.valid('param');
    deleteCredential(app.db, actorOf(c), credential_id);
    return c.json({ status: 'success' as const }, 200);
  });
}
