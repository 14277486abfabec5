// Public API routes for one device's compliance (additive to spec section 4): its newest version's results, its waivers (list, add, remove).
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ApiError } from '../../errors';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { IntIdParam, SuccessStatusSchema, errorResponses, jsonBody, jsonResponse, pagination } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { parseLocalTimestamp } from '../../lib/time';
import { COMPLIANCE_OPS } from './compliance.policy';
import { createWaiver, deviceCompliance, listWaivers, removeWaiver } from './compliance-fleet.service';
import {
  DeviceComplianceSchema,
  WaiverCreateSchema,
  WaiverIdParams,
  WaiverListQuerySchema,
  WaiverPageSchema,
  WaiverSchema,
  toDeviceComplianceDto,
  toWaiverDto,
} from './compliance.schemas';

const tags = ['Compliance'];
const security = [{ ApiKeyAuth: [] }];
const DeviceIdParams = z.object({ device_id: IntIdParam('device_id') });
const SCOPE_ONE = 'A device outside the key owner’s device-group scope gives 403 `PERMISSION_DENIED`, as the device reads do (spec 4.6).';

const resultsRoute = createRoute({
  method: 'get',
  path: '/devices/{device_id}/compliance',
  operationId: 'getDeviceCompliance',
  tags,
  summary: 'A device’s compliance',
  description:
    'The results of the rules that apply to the device on its newest stored version (judged first if the rules in force have not judged it yet): ' +
    'status, the failing lines of the stored configuration (which is stored redacted: secrets never appear), the remediation to apply, the waiver in force. ' +
    `A device with no stored version has \`backup_id\` null and no results. ${SCOPE_ONE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.check)] as const,
  request: { params: DeviceIdParams },
  responses: { 200: jsonResponse(DeviceComplianceSchema, 'The device’s results'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const listWaiversRoute = createRoute({
  method: 'get',
  path: '/devices/{device_id}/compliance/waivers',
  operationId: 'listDeviceComplianceWaivers',
  tags,
  summary: 'List a device’s waivers',
  description: `Waivers in force and expired ones (\`active\` false), latest expiry first. ${SCOPE_ONE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.waivers)] as const,
  request: { params: DeviceIdParams, query: WaiverListQuerySchema },
  responses: { 200: jsonResponse(WaiverPageSchema, 'One page of waivers'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

const createWaiverRoute = createRoute({
  method: 'post',
  path: '/devices/{device_id}/compliance/waivers',
  operationId: 'createDeviceComplianceWaiver',
  tags,
  summary: 'Waive a rule on a device',
  description:
    'Until `expires_at`, the rule’s failures on the device show as `waived` and count as compliant. The rule must exist (in force or in a shipped pack), ' +
    `else 422 on \`rule_id\`. Audited. ${SCOPE_ONE}`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.waive)] as const,
  request: { params: DeviceIdParams, body: jsonBody(WaiverCreateSchema) },
  responses: {
    201: jsonResponse(WaiverSchema, 'The waiver'),
    ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'),
  },
});

const deleteWaiverRoute = createRoute({
  method: 'delete',
  path: '/compliance/waivers/{waiver_id}',
  operationId: 'deleteDeviceComplianceWaiver',
  tags,
  summary: 'Remove a waiver',
  description: `The rule’s failures on its device count again at once. Audited. A waiver of a device outside the key owner’s device-group scope gives 403 \`PERMISSION_DENIED\`.`,
  security,
  middleware: [requirePermission(COMPLIANCE_OPS.unwaive)] as const,
  request: { params: WaiverIdParams },
  responses: { 200: jsonResponse(SuccessStatusSchema, 'The waiver was removed'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, resultsRoute, async (c) => {
    const { device_id } = c.req.valid('param');
    const { db, snapshots } = c.get('app');
    const { device, result } = await deviceCompliance(db, snapshots, actorOf(c), device_id);
    return c.json(toDeviceComplianceDto(result, device, c.get('timezone')), 200);
  });

  registerRoute(api, listWaiversRoute, (c) => {
    const { device_id } = c.req.valid('param');
    const { page, limit } = c.req.valid('query');
    const all = listWaivers(c.get('app').db, actorOf(c), device_id);
    const tz = c.get('timezone');
    return c.json({ items: all.slice((page - 1) * limit, page * limit).map((w) => toWaiverDto(w, tz)), pagination: pagination(page, limit, all.length) }, 200);
  });

  registerRoute(api, createWaiverRoute, (c) => {
    const { device_id } = c.req.valid('param');
    const body = c.req.valid('json');
    const tz = c.get('timezone');
    const expires = parseLocalTimestamp(body.expires_at, tz);
    if (expires === null) throw ApiError.validation([{ field: 'expires_at', message: 'must be YYYY-MM-DD HH:MM:SS' }]);
    const { db, snapshots } = c.get('app');
    const w = createWaiver(db, snapshots, actorOf(c), device_id, { ...body, expires_at: expires });
    return c.json(toWaiverDto(w, tz), 201);
  });

  registerRoute(api, deleteWaiverRoute, (c) => {
    const { waiver_id } = c.req.valid('param');
    removeWaiver(c.get('app').db, actorOf(c), waiver_id);
    return c.json({ status: 'success' as const }, 200);
  });
}
