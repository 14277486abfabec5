// Schemas of the diff and search API (they generate the OpenAPI components) and the DTO mapping.
import { z } from '@hono/zod-openapi';
import { IntIdParam, PaginationSchema, paginationQuery, queryBoolean, UuidParam } from '../../http/openapi';
import { formatTimestamp } from '../../lib/time';
import type { CompareResult, CompareSide } from './compare.service';
import type { SearchHit } from './search.service';

const TIME = 'Time as `YYYY-MM-DD HH:MM:SS` in the request time zone';
const uuid = (name: string, description: string) =>
  UuidParam(name)
    .optional()
    .openapi({ param: { name, in: 'query' }, description });
const queryId = (name: string, description: string) =>
  IntIdParam(name)
    .optional()
    .openapi({ param: { name, in: 'query' }, description });

export const DiffQuery = z
  .object({
    from: uuid('from', 'The older version: a backup id (with `to`)'),
    to: uuid('to', 'The newer version: a backup id (with `from`); it may belong to another device'),
    device_id: queryId('device_id', 'Without `from`/`to`: the newest two versions of this device'),
    other_device_id: queryId('other_device_id', 'With `device_id`: the newest version of `device_id` against the newest of this device'),
    ignore: queryBoolean().openapi({ description: 'Drop the lines the devices’ templates ignore (timestamps, counters) before comparing' }),
    format: z.enum(['json', 'unified']).optional().openapi({
      description: '`json` (default) or `unified` (the diff as `text/x-diff`); without it, `Accept: text/x-diff` or `text/plain` asks for unified',
    }),
  })
  .superRefine((q, ctx) => {
    const byId = q.from !== undefined || q.to !== undefined;
    if (byId && (q.from === undefined || q.to === undefined))
      ctx.addIssue({ code: 'custom', path: [q.from ? 'to' : 'from'], message: 'give both from and to' });
    if (byId && q.device_id !== undefined) ctx.addIssue({ code: 'custom', path: ['device_id'], message: 'give either from and to, or device_id' });
    if (!byId && q.device_id === undefined) ctx.addIssue({ code: 'custom', path: ['device_id'], message: 'give from and to, or device_id' });
    if (q.other_device_id !== undefined && q.device_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['device_id'], message: 'other_device_id needs device_id' });
  });

const SideSchema = z.object({
  backup_id: z.string().openapi({ format: 'uuid' }),
  device_id: z.number().int(),
  device_name: z.string().openapi({ example: 'core-sw-1' }),
  started_at: z.string().openapi({ description: TIME, example: '2025-03-01 02:00:04' }),
});

const HunkSchema = z
  .object({
    header: z.string().openapi({ example: '@@ -3,7 +3,7 @@' }),
    lines: z.array(z.object({ kind: z.enum(['same', 'del', 'add']), text: z.string() })),
  })
  .openapi('DiffHunk');

export const DiffSchema = z
  .object({
    from: SideSchema,
    to: SideSchema,
    identical: z.boolean(),
    added: z.number().int().openapi({ description: 'Lines added' }),
    removed: z.number().int().openapi({ description: 'Lines removed' }),
    truncated: z.boolean().openapi({
      description: 'The versions differ too much to align within the appliance’s bounds: `hunks` is empty and the unified form replaces the whole file',
    }),
    hunks: z.array(HunkSchema),
  })
  .openapi('ConfigDiff', {
    description: 'The difference between two stored versions',
    example: {
      from: { backup_id: '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10', device_id: 12, device_name: 'core-sw-1', started_at: '2025-03-01 02:00:04' },
      to: { backup_id: '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f', device_id: 12, device_name: 'core-sw-1', started_at: '2025-03-02 02:00:03' },
      identical: false,
      added: 1,
      removed: 1,
      truncated: false,
      hunks: [
        {
          header: '@@ -1,3 +1,3 @@',
          lines: [
            { kind: 'same', text: 'hostname core-sw-1' },
            { kind: 'del', text: ' description uplink' },
            { kind: 'add', text: ' description uplink to dc2' },
          ],
        },
      ],
    },
  });

const sideDto = (s: CompareSide, tz: string) => ({ ...s, started_at: formatTimestamp(s.started_at, tz) });

export function toDiffDto(r: CompareResult, tz: string): z.infer<typeof DiffSchema> {
  const hunks = r.hunks.map((h) => ({ header: h.header, lines: h.lines.map((l) => ({ kind: l.kind, text: l.text })) }));
  return { from: sideDto(r.from, tz), to: sideDto(r.to, tz), identical: r.identical, added: r.added, removed: r.removed, truncated: r.truncated, hunks };
}

export const SearchQuerySchema = z.object({
  q: z.string().openapi({ description: 'The text (or, with `regex=true`, the RE2 pattern) to find, 1-200 characters', example: 'snmp-server community' }),
  regex: queryBoolean().openapi({ description: 'Take `q` as an RE2 regular expression (linear time; no backreferences or lookaround)' }),
  case_sensitive: queryBoolean(),
  group_id: queryId('group_id', 'Only devices of this group and its subgroups'),
  template_id: queryId('template_id', 'Only devices of this template (platform)'),
  ...paginationQuery(50, 100),
});

/** Matching lines returned per device; `match_count` tells how many there are in all. */
export const SEARCH_LINES_PER_HIT = 100;

const SearchHitSchema = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    backup_id: z.string().openapi({ format: 'uuid', description: 'The newest stored version searched (GET /backups/{backup_id}/content)' }),
    started_at: z.string().openapi({ description: TIME }),
    match_count: z.number().int(),
    lines: z
      .array(z.object({ line: z.number().int().openapi({ description: 'Line number, from 1' }), text: z.string() }))
      .openapi({ description: `The matching lines, at most ${SEARCH_LINES_PER_HIT}` }),
  })
  .openapi('SearchHit');

export const SearchPageSchema = z
  .object({
    items: z.array(SearchHitSchema),
    pagination: PaginationSchema,
    devices_searched: z.number().int(),
    truncated: z.boolean().openapi({ description: 'Stopped at the cap of devices with hits: narrow the query or filter by group' }),
    partial: z.boolean().openapi({ description: 'Stopped at the time budget: the hits found so far' }),
    elapsed_ms: z.number().int(),
  })
  .openapi('SearchPage', {
    description: 'Devices whose newest stored version matches, by device name, one page at a time',
    example: {
      items: [
        {
          device_id: 12,
          device_name: 'core-sw-1',
          backup_id: '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
          started_at: '2025-03-02 02:00:03',
          match_count: 1,
          lines: [{ line: 41, text: 'snmp-server community ******** RO' }],
        },
      ],
      pagination: { page: 1, limit: 50, total: 1, total_pages: 1, has_next: false, has_prev: false },
      devices_searched: 120,
      truncated: false,
      partial: false,
      elapsed_ms: 35,
    },
  });

export function toSearchHitDto(h: SearchHit, tz: string): z.infer<typeof SearchHitSchema> {
  return {
    device_id: h.deviceId,
    device_name: h.deviceName,
    backup_id: h.backupId,
    started_at: formatTimestamp(h.startedAt, tz),
    match_count: h.matchCount,
    lines: (h.lines ?? []).slice(0, SEARCH_LINES_PER_HIT).map((l) => ({ line: l.n, text: l.text })),
  };
}
