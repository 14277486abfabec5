// Configuration search: a text or RE2 pattern over the newest stored version of every device in the user's scope, run on a worker.
import { ApiError } from '../../errors';
import { recordAudit } from '../audit/audit.service';
import { listLatestSnapshots } from '../backups/backups.service';
import { listDeviceIds } from '../devices/devices.service';
import type { AppServices } from '../../http/context';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { BACKUP_OPS } from '../policy';
import type { Scope } from '../../identity/principal';
import { PatternError, compileRe2 } from '../../lib/re2';
import { OffThreadBusy, OffThreadTimeout, runOffThread } from './workers/pool';
import type { SearchDone, SearchHit, SearchQuery, SearchTask } from './workers/search-task';

export type { SearchHit, SearchQuery } from './workers/search-task';

export interface SearchResult {
  hits: SearchHit[];
  devicesSearched: number;
  /** Stopped at the cap of devices with hits. */
  truncated: boolean;
  /** Stopped at the time budget: the hits found so far. */
  partial: boolean;
  elapsedMs: number;
}

const MAX_PATTERN = 200;
/** A page's search stops once it has found this many devices with hits, or enough to fill the page asked for and tell whether another follows. */
export const MAX_DEVICES_WITH_HITS = 200;
/** Bounds of an export: devices with hits, and matching lines per device. */
export const EXPORT_LIMITS = { devices: 5_000, lines_per_device: 1_000, lines: 100_000 } as const;

export interface SearchOptions {
  /** Only devices of this group and its subgroups. */
  groupId?: number;
  /** Only devices of this template (platform). */
  templateId?: number;
  /** The hits whose HTML to build (a page); the search also stops after `to` + 1 devices with hits if that is past the cap. */
  window?: { from: number; to: number };
  /** An export: matching lines for every hit instead of HTML, up to EXPORT_LIMITS. */
  export?: boolean;
}
/** A search stops here and returns what it found, marked partial. */
export const SEARCH_BUDGET_MS = 8_000;
/** Past the budget plus this grace the worker is terminated (a single huge line may overrun the budget). */
const HARD_GRACE_MS = 4_000;

/**
 * Checks a query and returns it for searchConfigs. Regex mode takes RE2 syntax: linear-time matching whatever
 * the pattern, so no query can hold a worker (or, before, the whole appliance) with catastrophic backtracking.
 */
export function buildMatcher(query: string, mode: 'text' | 'regex', caseSensitive: boolean): SearchQuery {
  if (query.length === 0 || query.length > MAX_PATTERN) throw ApiError.validation([{ field: 'q', message: `enter 1-${MAX_PATTERN} characters` }]);
  if (mode === 'regex') {
    try {
      compileRe2(query, { caseInsensitive: !caseSensitive });
    } catch (err) {
      if (!(err instanceof PatternError)) throw err;
      throw ApiError.validation([{ field: 'q', message: `not valid RE2 syntax: ${err.problem}` }]);
    }
  }
  return { query, mode, caseSensitive };
}

/** Searches on a pool worker; the event loop only lists the snapshots and collects the hits. */
export async function searchConfigs(
  app: AppServices,
  scope: Scope,
  query: SearchQuery,
  budgetMs = SEARCH_BUDGET_MS,
  opts: SearchOptions = {},
): Promise<SearchResult> {
  const started = performance.now();
  let rows = listLatestSnapshots(app.db, scope);
  if (opts.groupId !== undefined || opts.templateId !== undefined) {
    const ids = new Set(listDeviceIds(app.db, scope, { group_id: opts.groupId, template_id: opts.templateId }));
    rows = rows.filter((r) => ids.has(r.device_id));
  }
  const targets = rows.map((r) => ({
    deviceId: r.device_id,
    deviceName: r.device_name,
    backupId: r.backup_id,
    startedAt: r.started_at,
    hash: r.config_snapshot_hash,
  }));
  const cap = opts.export ? EXPORT_LIMITS.devices : Math.max(MAX_DEVICES_WITH_HITS, (opts.window?.to ?? 0) + 1);
  const task: SearchTask = {
    query,
    snapshotsRoot: app.snapshots.root,
    targets,
    deadline: Date.now() + budgetMs,
    maxDevicesWithHits: cap,
    window: opts.window,
    exportLines: opts.export ? { perDevice: EXPORT_LIMITS.lines_per_device, total: EXPORT_LIMITS.lines } : undefined,
  };
  const hits: SearchHit[] = [];
  let done: SearchDone;
  try {
    done = await runOffThread<SearchDone>({ kind: 'search', ...task }, budgetMs + HARD_GRACE_MS, (hit) => hits.push(hit as SearchHit));
  } catch (err) {
    if (err instanceof OffThreadBusy) throw new ApiError('SERVICE_UNAVAILABLE', 'Too many searches are running; try again in a few seconds.');
    if (!(err instanceof OffThreadTimeout)) throw err;
    app.log?.warn({ elapsed_ms: Math.round(performance.now() - started) }, 'search worker passed its hard deadline and was stopped');
    done = { devicesSearched: -1, truncated: false, partial: true, unreadable: [] };
  }
  for (const u of done.unreadable) app.log?.error({ backup_id: u.backupId, hash: u.hash, problem: u.problem }, 'snapshot integrity error');
  return {
    hits,
    devicesSearched: done.devicesSearched >= 0 ? done.devicesSearched : hits.length,
    truncated: done.truncated,
    partial: done.partial,
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** The search a person runs (web page, API): permissions checked at once, the search run in their scope, one audit row. */
export function searchConfigsAs(
  app: AppServices,
  actor: Actor,
  query: SearchQuery,
  opts: SearchOptions & { format?: 'csv' | 'txt' } = {},
): Promise<SearchResult> {
  authorize(actor, BACKUP_OPS.search);
  return searchAndAudit(app, actor, query, opts);
}

async function searchAndAudit(app: AppServices, actor: Actor, query: SearchQuery, opts: SearchOptions & { format?: 'csv' | 'txt' }): Promise<SearchResult> {
  const { format, ...search } = opts;
  const result = await searchConfigs(app, actor.principal.scope, query, SEARCH_BUDGET_MS, search);
  recordAudit(app.db, actor, {
    action: 'search',
    target: '',
    details: {
      mode: query.mode,
      length: query.query.length,
      hits: result.hits.length,
      partial: result.partial,
      ...(opts.groupId !== undefined ? { group_id: opts.groupId } : {}),
      ...(opts.templateId !== undefined ? { template_id: opts.templateId } : {}),
      ...(format ? { export: format } : {}),
    },
  });
  return result;
}
