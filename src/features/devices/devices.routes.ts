// Public API routes for devices: list, unreachable list, detail, create, update, delete, under the device-group scope (spec 4.6).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv, type DeviceDetector } from '../../http/context';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { requirePermission } from '../../http/middleware';
import { DEVICE_OPS } from './devices.policy';
import { IntIdParam, SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import {
  DeviceCreateRequestSchema,
  DeviceListQuerySchema,
  DevicePageQuerySchema,
  DevicePageSchema,
  DeviceSchema,
  DeviceUpdateSchema,
  toDeviceDto,
} from './devices.schemas';
import { DEFAULT_PORT, createDevice, deleteDevice, getDeviceFor, listDevicesFor, updateDevice, type Device, type DeviceInput } from './devices.service';
import { registerRoute } from '../../http/route';

const tags = ['Devices'];
const security = [{ ApiKeyAuth: [] }];
const DeviceIdParams = z.object({ device_id: IntIdParam('device_id') });
const SCOPE_LIST = 'Only devices inside the key owner’s device-group scope are listed and counted; ungrouped devices need scope "all".';
const SCOPE_ONE = 'A device outside the key owner’s device-group scope gives 403 `PERMISSION_DENIED`.';

const listRoute = createRoute({
  method: 'get',
  path: '/devices',
  operationId: 'listDevices',
  tags,
  summary: 'List devices',
  description: `Paged list of devices ordered by name, with optional filters (combined with AND). ${SCOPE_LIST}`,
  security,
  middleware: [requirePermission(DEVICE_OPS.list)] as const,
  request: { query: DeviceListQuerySchema },
  responses: { 200: jsonResponse(DevicePageSchema, 'One page of devices'), ...errorResponses('PERMISSION_DENIED') },
});

const unreachableRoute = createRoute({
  method: 'get',
  path: '/devices/unreachable',
  operationId: 'listUnreachableDevices',
  tags,
  summary: 'List unreachable devices',
  description: `Paged list, ordered by name, of the devices whose last backup or probe could not reach them. ${SCOPE_LIST}`,
  security,
  middleware: [requirePermission(DEVICE_OPS.listUnreachable)] as const,
  request: { query: DevicePageQuerySchema },
  responses: { 200: jsonResponse(DevicePageSchema, 'One page of unreachable devices'), ...errorResponses('PERMISSION_DENIED') },
});

const getRoute = createRoute({
  method: 'get',
  path: '/devices/{device_id}',
  operationId: 'getDevice',
  tags,
  summary: 'Get a device',
  description: SCOPE_ONE,
  security,
  middleware: [requirePermission(DEVICE_OPS.get)] as const,
  request: { params: DeviceIdParams },
  responses: { 200: jsonResponse(DeviceSchema, 'The device'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const createDeviceRoute = createRoute({
  method: 'post',
  path: '/devices',
  operationId: 'createDevice',
  tags,
  summary: 'Create a device',
  description:
    'Needs `devices.create` only (spec 4.6 rule 3): the `group_id` is not checked against the caller’s scope, so a scoped caller may ' +
    'create a device it cannot then see. The credential’s usage scope (`group_ids`) must cover `group_id` (ungrouped devices: ' +
    'unrestricted credentials only), else 422 `VALIDATION_ERROR` on the field `credential_id` naming the reason: that is about the ' +
    'data, so not even scope "all" may break it. A secret only goes where someone entitled to it sent it: when the caller lacks ' +
    '`credentials.view`, or the credential’s usage scope is not inside the caller’s scope, the device is still created (201) but ' +
    '**held**: its backups fail as `CREDENTIAL_NOT_PERMITTED` without decrypting the credential or connecting, until a user ' +
    'entitled to the credential approves the address on the device’s web page. The device JSON is the same; the audit row says ' +
    'the hold was placed. Missing `group_id`, `credential_id` or `template_id` records are a 422 naming the field. ' +
    '`template_id` and/or `credential_id` "auto": the appliance first logs in at the address with the given credential, then the ' +
    'others the caller is entitled to that may serve the group (at most `backup.detect_max_tries`), and picks the template whose ' +
    'detect patterns match the banner, prompt and probe output; nothing picked (no login, unreachable, no match, two twins) is a 422 ' +
    'on that field saying why ("could not tell: ...").',
  security,
  middleware: [requirePermission(DEVICE_OPS.create)] as const,
  request: { body: jsonBody(DeviceCreateRequestSchema) },
  responses: {
    201: jsonResponse(DeviceSchema, 'The created device (held when the caller is not entitled to its credential)'),
    ...errorResponses('PERMISSION_DENIED', 'DEVICE_NAME_EXISTS', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const updateRoute = createRoute({
  method: 'put',
  path: '/devices/{device_id}',
  operationId: 'updateDevice',
  tags,
  summary: 'Update a device',
  description: [
    'Partial update: only the fields in the body change (`{}` changes nothing); send `null` to clear `group_id` or `schedule`.',
    `${SCOPE_ONE} A scoped caller also gets 403 when moving the device to a group outside its scope, or to no group.`,
    'Changing the protocol without a port moves a default port (22/23) to the new protocol’s default; a custom port is kept.',
    'Changing hostname, port or protocol resets reachability to unknown. The recorded host key is kept.',
    'Checked by `devices.update` and the device-group scope only. A new credential or group must be covered by the credential’s usage scope (422 `VALIDATION_ERROR` on `credential_id` otherwise).',
    'Changing `credential_id`, hostname, port or protocol (or accepting a host key, or choosing a custom template) by a caller not entitled to the device’s credential (lacking `credentials.view`, or the credential’s usage scope not inside the caller’s scope) is accepted (200) but **holds** the device: its backups fail as `CREDENTIAL_NOT_PERMITTED` without decrypting the credential or connecting, until a user entitled to the credential approves the address on the device’s web page. Such a change by an entitled caller approves the address it leaves (a hold is cleared). The audit row says what happened to the hold.',
    '`accept_host_key_change: true` approves exactly one fingerprint: the key the device offered at its latest `HOST_KEY_CHANGED` backup (409 `CONFLICT` when there is none). The next backup accepts that key only, records it and clears the approval; `false` withdraws it. Every change is audited.',
  ].join('\n\n'),
  security,
  middleware: [requirePermission(DEVICE_OPS.update)] as const,
  request: { params: DeviceIdParams, body: jsonBody(DeviceUpdateSchema) },
  responses: {
    200: jsonResponse(DeviceSchema, 'The updated device (held when a caller not entitled to its credential changed where it is sent)'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'DEVICE_NAME_EXISTS', 'CONFLICT', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/devices/{device_id}',
  operationId: 'deleteDevice',
  tags,
  summary: 'Delete a device and its backup history',
  description: [
    'Deletes the device **and its whole history**: the device record and every one of its backup records (the versions listed by ' +
      '`GET /devices/{device_id}/backups`, their metadata and their place in diffs and search) are removed and cannot be restored. ' +
      'Stored configuration files shared with another device’s versions stay. The deletion is audited with the device’s fields.',
    'To take a device out of service and keep its versions, retire it instead (`POST /devices/{device_id}/retire`).',
    SCOPE_ONE,
  ].join('\n\n'),
  security,
  middleware: [requirePermission(DEVICE_OPS.delete)] as const,
  request: { params: DeviceIdParams },
  responses: { 200: jsonResponse(SuccessStatusSchema, 'The device was deleted'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  const page = (items: Device[], tz: string, p: number, limit: number, total: number) => ({
    items: items.map((d) => toDeviceDto(d, tz)),
    pagination: pagination(p, limit, total),
  });

  registerRoute(api, listRoute, (c) => {
    const { page: p, limit, ...filter } = c.req.valid('query');
    const { items, total } = listDevicesFor(c.get('app').db, c.get('principal'), filter, p, limit);
    return c.json(page(items, c.get('timezone'), p, limit, total), 200);
  });

  // Before /devices/{device_id}, which would otherwise take "unreachable" as a (malformed) id.
  registerRoute(api, unreachableRoute, (c) => {
    const { page: p, limit } = c.req.valid('query');
    const { items, total } = listDevicesFor(c.get('app').db, c.get('principal'), { reachability: 'unreachable' }, p, limit);
    return c.json(page(items, c.get('timezone'), p, limit, total), 200);
  });

  registerRoute(api, getRoute, (c) => {
    const { device_id } = c.req.valid('param');
    return c.json(toDeviceDto(getDeviceFor(c.get('app').db, c.get('principal'), device_id), c.get('timezone')), 200);
  });

  registerRoute(api, createDeviceRoute, async (c) => {
    const device = createDevice(c.get('app').db, actorOf(c), await detectedInput(c.get('app').detector, actorOf(c), c.req.valid('json')));
    return c.json(toDeviceDto(device, c.get('timezone')), 201);
  });

  registerRoute(api, updateRoute, (c) => {
    const { device_id } = c.req.valid('param');
    const device = updateDevice(c.get('app').db, actorOf(c), device_id, c.req.valid('json'));
    return c.json(toDeviceDto(device, c.get('timezone')), 200);
  });

  registerRoute(api, deleteRoute, (c) => {
    const { device_id } = c.req.valid('param');
    deleteDevice(c.get('app').db, actorOf(c), device_id);
    return c.json({ status: 'success' as const }, 200);
  });
}

/** A create request with template_id or credential_id "auto": detected at its address first (422 on the field when nothing was). */
async function detectedInput(
  detector: DeviceDetector,
  actor: Actor,
  body: Omit<DeviceInput, 'template_id' | 'credential_id'> & { template_id: number | 'auto'; credential_id: number | 'auto' },
): Promise<DeviceInput> {
  const { template_id, credential_id } = body;
  if (template_id !== 'auto' && credential_id !== 'auto') return { ...body, template_id, credential_id };
  const at = { host: body.hostname, port: body.port ?? DEFAULT_PORT[body.protocol], protocol: body.protocol, group_id: body.group_id };
  const r = await detector.detectAt(actor, at, credential_id === 'auto' ? null : credential_id);
  if (r.template_id === null || r.credential_id === null) {
    const field = template_id === 'auto' ? 'template_id' : 'credential_id';
    throw ApiError.validation([{ field, message: r.reason }], `${field} "auto": ${r.reason}`);
  }
  return {
    ...body,
    template_id: template_id === 'auto' ? r.template_id : template_id,
    credential_id: credential_id === 'auto' ? r.credential_id : credential_id,
  };
}
