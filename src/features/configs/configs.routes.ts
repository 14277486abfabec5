// Public API routes over stored configurations: the diff of two versions, and search across the newest versions.
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { actorOf, type AppEnv } from '../../http/context';
import { requirePermission } from '../../http/middleware';
import { errorResponses, jsonResponse, pagination } from '../../http/openapi';
import { registerRoute } from '../../http/route';
import { BACKUP_OPS } from '../backups/backups.policy';
import { compareVersionsFor, type ComparePick } from './compare.service';
import { DiffQuery, DiffSchema, SearchPageSchema, SearchQuerySchema, toDiffDto, toSearchHitDto } from './configs.schemas';
import { buildMatcher, searchConfigsAs } from './search.service';

const security = [{ ApiKeyAuth: [] }];

const diffRoute = createRoute({
  method: 'get',
  path: '/diff',
  operationId: 'getConfigDiff',
  tags: ['Diff'],
  summary: 'Diff two stored versions',
  description:
    'Compares two versions: `from` and `to` (backup ids, of one device or of two), or the newest two versions of `device_id`, or the newest ' +
    'version of `device_id` against the newest of `other_device_id`. `format=unified` (or `Accept: text/x-diff`) answers the unified diff as ' +
    'text; the default is JSON with the hunks. `ignore=true` drops the lines the templates ignore. Bounded: versions too different to align ' +
    'within the appliance’s limits come back `truncated` (header `X-Diff-Truncated: true` on the unified form) as a whole-file replacement. ' +
    'Both devices must be inside the key’s scope (403). A version without stored text: 409. Permission: `devices.view` and `backups.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.browse)] as const,
  request: { query: DiffQuery },
  responses: {
    200: {
      description: 'The diff',
      headers: { 'X-Request-ID': { description: 'Request id', schema: { type: 'string' as const } } },
      content: {
        'application/json': { schema: DiffSchema },
        'text/x-diff': {
          schema: { type: 'string' as const },
          example: '--- a/core-sw-1\n+++ b/core-sw-1\n@@ -1,3 +1,3 @@\n hostname core-sw-1\n- description uplink\n+ description uplink to dc2\n',
        },
      },
    },
    ...errorResponses('PERMISSION_DENIED', 'BACKUP_DEVICE_FORBIDDEN', 'BACKUP_NOT_FOUND', 'RESOURCE_NOT_FOUND', 'CONFLICT'),
  },
});

const searchRoute = createRoute({
  method: 'get',
  path: '/search',
  operationId: 'searchConfigs',
  tags: ['Search'],
  summary: 'Search the newest configurations',
  description:
    'Finds `q` in the newest stored version of every device in the key’s scope (as text, or as an RE2 pattern with `regex=true`; an ' +
    'invalid pattern is a 422 naming `q`), optionally within a group (with subgroups) or a template. One page of devices with hits, each ' +
    'with its matching lines. Bounded: a search stops after 8 seconds (`partial`) or at the cap of devices with hits (`truncated`). One audit ' +
    'entry per search. Permission: `devices.view` and `backups.view`.',
  security,
  middleware: [requirePermission(BACKUP_OPS.search)] as const,
  request: { query: SearchQuerySchema },
  responses: { 200: jsonResponse(SearchPageSchema, 'One page of devices with hits'), ...errorResponses('PERMISSION_DENIED', 'RESOURCE_NOT_FOUND') },
});

function wantsUnified(format: 'json' | 'unified' | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'unified';
  return /\btext\/(x-diff|x-patch|plain)\b/.test(accept ?? '') && !/\bapplication\/json\b/.test(accept ?? '');
}

export function register(api: OpenAPIHono<AppEnv>): void {
  registerRoute(api, diffRoute, async (c) => {
    const q = c.req.valid('query');
    const pick: ComparePick =
      q.from !== undefined && q.to !== undefined ? { from: q.from, to: q.to } : { deviceId: q.device_id!, otherDeviceId: q.other_device_id };
    const r = await compareVersionsFor(c.get('app'), c.get('principal'), pick, q.ignore === true);
    // Configuration text, even in pieces, is sensitive (spec section 8).
    c.header('Cache-Control', 'no-store');
    if (wantsUnified(q.format, c.req.header('Accept'))) {
      return c.body(r.unified, 200, { 'Content-Type': 'text/x-diff; charset=utf-8', 'X-Diff-Truncated': String(r.truncated) });
    }
    return c.json(toDiffDto(r, c.get('timezone')), 200);
  });

  registerRoute(api, searchRoute, async (c) => {
    const q = c.req.valid('query');
    const query = buildMatcher(q.q, q.regex ? 'regex' : 'text', q.case_sensitive === true);
    const window = { from: (q.page - 1) * q.limit, to: q.page * q.limit };
    const r = await searchConfigsAs(c.get('app'), actorOf(c), query, { groupId: q.group_id, templateId: q.template_id, export: true, window });
    const tz = c.get('timezone');
    const page = r.hits.map((h) => toSearchHitDto(h, tz));
    c.header('Cache-Control', 'no-store');
    return c.json(
      {
        items: page,
        pagination: pagination(q.page, q.limit, r.total),
        devices_searched: r.devicesSearched,
        truncated: r.truncated,
        partial: r.partial,
        elapsed_ms: r.elapsedMs,
      },
      200,
    );
  });
}
