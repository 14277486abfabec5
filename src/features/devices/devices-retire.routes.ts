// Public API routes to retire and reactivate a device (additions to spec section 4, in its conventions).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { EmptyBody, IntIdParam, errorResponses, jsonBody, jsonResponse } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { DEVICE_OPS } from './devices.policy';
import { DeviceSchema, toDeviceDto } from './devices.schemas';
import { reactivateDevice, retireDevice } from './devices-retire.service';

const tags = ['Devices'];
const security = [{ ApiKeyAuth: [] }];
const DeviceIdParams = z.object({ device_id: IntIdParam('device_id') });
const SCOPE_ONE = 'A device outside the key owner’s device-group scope gives 403 `PERMISSION_DENIED`. Needs `devices.update`.';

const retireRoute = createRoute({
  method: 'post',
  path: '/devices/{device_id}/retire',
  operationId: 'retireDevice',
  tags,
  summary: 'Retire a device (keep its history)',
  description: [
    'The device stays with every backup record (still listed by `GET /devices/{device_id}/backups` and readable), but is disabled ' +
      'and never backed up again: off every schedule, event backup and reachability probe, out of the unreachable list. ' +
      '`retired` says when and by whom. A retired device cannot be enabled (`PUT` gives 409 `CONFLICT`) until it is reactivated.',
    `Retiring a retired device changes nothing. The change is audited. ${SCOPE_ONE}`,
  ].join('\n\n'),
  security,
  middleware: [requirePermission(DEVICE_OPS.retire)] as const,
  request: { params: DeviceIdParams, body: jsonBody(EmptyBody) },
  responses: {
    200: jsonResponse(DeviceSchema, 'The retired device'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const reactivateRoute = createRoute({
  method: 'post',
  path: '/devices/{device_id}/reactivate',
  operationId: 'reactivateDevice',
  tags,
  summary: 'Reactivate a retired device',
  description: `Puts a retired device back in service, enabled: its schedule applies again. A device in service is left as it is. The change is audited. ${SCOPE_ONE}`,
  security,
  middleware: [requirePermission(DEVICE_OPS.reactivate)] as const,
  request: { params: DeviceIdParams, body: jsonBody(EmptyBody) },
  responses: {
    200: jsonResponse(DeviceSchema, 'The device, in service'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, retireRoute, (c) => {
    const device = retireDevice(c.get('app').db, actorOf(c), c.req.valid('param').device_id);
    return c.json(toDeviceDto(device, c.get('timezone')), 200);
  });
  registerRoute(api, reactivateRoute, (c) => {
    const device = reactivateDevice(c.get('app').db, actorOf(c), c.req.valid('param').device_id);
    return c.json(toDeviceDto(device, c.get('timezone')), 200);
  });
}
