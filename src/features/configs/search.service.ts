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
import type { SearchDone, SearchHit, SearchQuery, SearchTarget, SearchTask } from './workers/search-task';
import { planIndexedSearch } from './search-index.service';
import type { LatestVersionRow } from './search-index.store';

export type { SearchHit, SearchQuery } from './workers/search-task';

export interface SearchResult {
  /** The hits of the window asked for (all of them without one), by device name. */
  hits: SearchHit[];
  /** Devices with hits: every one (from the line index), or those found before the search stopped (`truncated`, `partial`). */
  total: number;
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

/** Devices listed (and sent to a worker) per task: a search whose hits come early reads one run, whatever the inventory's size. */
export const SEARCH_CHUNK = 1_000;

/**
 * Searches the newest configurations in the scope: through the line index when it can answer (search-index.service.ts:
 * every device with hits counted, only the shown ones' files read), else by reading every file (scanConfigs).
 */
export async function searchConfigs(
  app: AppServices,
  scope: Scope,
  query: SearchQuery,
  budgetMs = SEARCH_BUDGET_MS,
  opts: SearchOptions = {},
  chunkSize = SEARCH_CHUNK,
): Promise<SearchResult> {
  const started = performance.now();
  const deadline = Date.now() + budgetMs;
  const cap = opts.export ? EXPORT_LIMITS.devices : Number.MAX_SAFE_INTEGER;
  const window = { from: opts.window?.from ?? 0, to: Math.min(cap, opts.window?.to ?? cap) };
  const plan = await planIndexedSearch(app, scope, query, { groupId: opts.groupId, templateId: opts.templateId, ...window }, async (versions) => {
    const found: SearchHit[] = [];
    const done = await searchChunk(
      app,
      { ...baseTask(app, query, deadline), targets: versions.map(toTarget), maxDevicesWithHits: versions.length, window: { from: 0, to: 0 } },
      found,
      started,
    );
    if (done.partial) throw new SearchIndexAbandoned();
    return new Set(found.map((h) => h.deviceId));
  }).catch((err: unknown) => {
    if (err instanceof SearchIndexAbandoned) return null;
    throw err;
  });
  if (!plan) {
    const all = await scanConfigs(app, scope, query, deadline, started, opts, chunkSize);
    return { ...all, hits: opts.window ? all.hits.slice(opts.window.from, opts.window.to) : all.hits, total: all.hits.length };
  }
  const shown = plan.shown;
  const hits: SearchHit[] = [];
  const task: SearchTask = {
    ...baseTask(app, query, deadline),
    targets: shown.map(toTarget),
    maxDevicesWithHits: shown.length,
    exportLines: opts.export ? { perDevice: EXPORT_LIMITS.lines_per_device, total: EXPORT_LIMITS.lines } : undefined,
  };
  const done = shown.length ? await searchChunk(app, task, hits, started) : { truncated: false, partial: false };
  return {
    hits,
    total: plan.total,
    devicesSearched: plan.devicesSearched,
    truncated: (opts.export === true && plan.total > cap) || (done.truncated && hits.length < shown.length),
    partial: done.partial,
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** The stale devices' files could not be read within the budget: the whole search reads the files instead. */
class SearchIndexAbandoned extends Error {}

function baseTask(app: AppServices, query: SearchQuery, deadline: number): Omit<SearchTask, 'targets' | 'maxDevicesWithHits'> {
  return { query, snapshotsRoot: app.snapshots.root, deadline };
}

function toTarget(r: LatestVersionRow): SearchTarget {
  return { deviceId: r.device_id, deviceName: r.device_name, backupId: r.backup_id, startedAt: r.started_at, hash: r.config_snapshot_hash };
}

/**
 * Searches on pool workers, run after run of SEARCH_CHUNK devices by name; the event loop only lists each run's
 * snapshots and collects the hits. The runs share one deadline and one cap, so the result is the one a single task
 * over every device would give.
 */
async function scanConfigs(
  app: AppServices,
  scope: Scope,
  query: SearchQuery,
  deadline: number,
  started: number,
  opts: SearchOptions,
  chunkSize: number,
): Promise<Omit<SearchResult, 'total'>> {
  const only =
    opts.groupId !== undefined || opts.templateId !== undefined
      ? new Set(listDeviceIds(app.db, scope, { group_id: opts.groupId, template_id: opts.templateId }))
      : null;
  const cap = opts.export ? EXPORT_LIMITS.devices : Math.max(MAX_DEVICES_WITH_HITS, (opts.window?.to ?? 0) + 1);
  const hits: SearchHit[] = [];
  const result = { devicesSearched: 0, truncated: false, partial: false };
  let exported = 0;
  let after: string | null = null;
  do {
    const chunk = listLatestSnapshots(app.db, scope, after, chunkSize);
    after = chunk.lastName;
    const targets = chunk.rows.filter((r) => !only || only.has(r.device_id)).map(toTarget);
    if (targets.length === 0) continue;
    const found = hits.length;
    const task: SearchTask = {
      ...baseTask(app, query, deadline),
      targets,
      maxDevicesWithHits: cap - found,
      window: opts.window && { from: opts.window.from - found, to: opts.window.to - found },
      exportLines: opts.export ? { perDevice: EXPORT_LIMITS.lines_per_device, total: EXPORT_LIMITS.lines - exported } : undefined,
    };
    const done = await searchChunk(app, task, hits, started);
    result.devicesSearched += done.devicesSearched >= 0 ? done.devicesSearched : hits.length - found;
    for (let i = found; i < hits.length; i++) exported += hits[i].lines?.length ?? 0;
    result.truncated = done.truncated;
    result.partial = done.partial;
  } while (after !== null && !result.truncated && !result.partial);
  return { hits, ...result, elapsedMs: Math.round(performance.now() - started) };
}

/** One run of devices on a worker; its hits are appended to `hits` as they come. */
async function searchChunk(app: AppServices, task: SearchTask, hits: SearchHit[], started: number): Promise<SearchDone> {
  const budget = Math.max(0, task.deadline - Date.now());
  let done: SearchDone;
  try {
    done = await runOffThread<SearchDone>({ kind: 'search', ...task }, budget + HARD_GRACE_MS, (hit) => hits.push(hit as SearchHit));
  } catch (err) {
    if (err instanceof OffThreadBusy) throw new ApiError('SERVICE_UNAVAILABLE', 'Too many searches are running; try again in a few seconds.');
    if (!(err instanceof OffThreadTimeout)) throw err;
    app.log?.warn({ elapsed_ms: Math.round(performance.now() - started) }, 'search worker passed its hard deadline and was stopped');
    done = { devicesSearched: -1, truncated: false, partial: true, unreadable: [] };
  }
  for (const u of done.unreadable) app.log?.error({ backup_id: u.backupId, hash: u.hash, problem: u.problem }, 'snapshot integrity error');
  return done;
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
      hits: result.total,
      partial: result.partial,
      ...(opts.groupId !== undefined ? { group_id: opts.groupId } : {}),
      ...(opts.templateId !== undefined ? { template_id: opts.templateId } : {}),
      ...(format ? { export: format } : {}),
    },
  });
  return result;
}
