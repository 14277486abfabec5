// Public API route of the audit trail: who did what, through which door, newest first, scoped as the web's audit page.
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ApiError } from '../../errors';
import type { AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { errorResponses, jsonResponse, pagedSchema, pagination, paginationQuery } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { auditRowJson, parseAuditTime } from './audit-view';
import { AUDIT_OPS } from './audit.policy';
import { listAuditFor, type AuditFilter } from './audit.service';

const AuditEntrySchema = z
  .object({
    id: z.number().int(),
    at: z.string().openapi({ description: 'ISO 8601, UTC', example: '2025-03-01T02:00:04.120Z' }),
    at_local: z.string().openapi({ description: '`YYYY-MM-DD HH:MM:SS` in the request time zone', example: '2025-03-01 03:00:04' }),
    actor: z.string().openapi({ example: 'automation' }),
    user_id: z.number().int().nullable(),
    door: z.enum(['api', 'web', 'cli', 'system', 'ldap', 'oidc', 'inventory']),
    door_ref: z.string().nullable().openapi({ description: 'Which key, session or console', example: 'key 3' }),
    request_id: z.string().nullable().openapi({ description: 'The X-Request-ID of the request that made the change' }),
    action: z.string().openapi({ example: 'backup.run' }),
    target: z.string().openapi({ example: 'device 12' }),
    changes: z.record(z.string(), z.unknown()).openapi({ description: 'Field changes, secrets as "changed"' }),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('AuditEntry');

const AuditPageSchema = pagedSchema(AuditEntrySchema, 'AuditPage');

const timeParam = (description: string) => z.string().max(40).optional().openapi({ description });

const AuditQuery = z.object({
  ...paginationQuery(),
  actor: z.string().max(200).optional().openapi({ description: 'Only this user (exact name)' }),
  action: z.string().max(100).optional().openapi({ description: 'Only this action (e.g. `backup.run`, `device.update`)', example: 'backup.run' }),
  target: z.string().max(200).optional().openapi({ description: 'Only this target (e.g. `device 12`)' }),
  since: timeParam('From this time on: `YYYY-MM-DD[ HH:MM[:SS]]` in the request time zone'),
  until: timeParam('Up to this time, same format'),
});

const listRoute = createRoute({
  method: 'get',
  path: '/audit',
  operationId: 'listAudit',
  tags: ['Audit'],
  summary: 'Read the audit trail',
  description:
    'Every change and every backup run, search and sign-in failure, newest first, from every door (web, API, CLI, system). A key scoped ' +
    'to device groups sees no rows about devices outside its groups, as the web’s audit page. Permission: `audit.view`.',
  security: [{ ApiKeyAuth: [] }],
  middleware: [requirePermission(AUDIT_OPS.list)] as const,
  request: { query: AuditQuery },
  responses: { 200: jsonResponse(AuditPageSchema, 'One page of the trail'), ...errorResponses('PERMISSION_DENIED') },
});

function timeOf(text: string | undefined, field: string, tz: string): number | undefined {
  if (text === undefined) return undefined;
  const at = parseAuditTime(text, tz);
  if (at === null) throw ApiError.validation([{ field, message: 'use YYYY-MM-DD[ HH:MM[:SS]]' }]);
  return at;
}

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, listRoute, (c) => {
    const { page, limit, actor, action, target, since, until } = c.req.valid('query');
    const tz = c.get('timezone');
    const filter: AuditFilter = { actor, action, target, since: timeOf(since, 'since', tz), until: timeOf(until, 'until', tz) };
    const r = listAuditFor(c.get('app').db, c.get('principal'), filter, page, limit);
    return c.json({ items: r.items.map((row) => auditRowJson(row, tz)), pagination: pagination(page, limit, r.total) }, 200);
  });
}
