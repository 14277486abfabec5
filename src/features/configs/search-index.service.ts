// The line index of the newest configurations (schema 0029, docs/search-index.md): kept current in the background, and
// the configuration search over it, which finds the devices with hits in the database and reads only the files it shows.
import { msSinceEngineWrite, type DB } from '../../db/open';
import type { AppServices } from '../../http/context';
import type { Scope } from '../../identity/principal';
import { sqliteNativePath } from '../../runtime/native';
import type { Logger } from 'pino';
import { listDeviceIds } from '../devices/devices.service';
import {
  countCandidateLines,
  countIndexedDevices,
  countIndexedVersions,
  countStaleDevices,
  listCandidateLines,
  listIndexedDevices,
  listLatestVersionsOf,
  listStaleDeviceIds,
  type IndexedDeviceFilter,
  type LatestVersionRow,
} from './search-index.store';
import { requiredTerms } from './search-terms';
import { runOffThread } from './workers/pool';
import type { IndexRefreshDone } from './workers/index-refresh';
import { lineMatcher, type SearchQuery } from './workers/search-task';

/**
 * Devices brought up to date per step: files read, then one write transaction on a pool worker (about 5 ms per device
 * on the bench machine), short so that a write of the event loop waiting for the lock waits little.
 */
const REFRESH_BATCH = 16;
/** A step past this is stopped (its worker ends; the transaction rolls back and the devices stay stale). */
const REFRESH_HARD_MS = 120_000;
/** A search uses the index while at most this many devices are stale (their files are read as before). */
export const MAX_STALE_FOR_INDEX = 500;
/** A search whose pieces occur in more distinct lines than this reads the files instead (the check would cost more). */
const MAX_CANDIDATE_LINES = 300_000;
/** Pause of the background upkeep when nothing is stale, and after a failed step. */
const IDLE_MS = 2_000;
const RETRY_MS = 60_000;
/**
 * While backups are being recorded (an engine record in the last BUSY_WINDOW_MS), the upkeep rests BUSY_REST_FACTOR
 * times as long as its last step took before the next one (at most BUSY_REST_MAX_MS): it then uses about a quarter of
 * one core and holds the write lock a quarter of the time, so the event loop's records seldom wait on it, and it
 * catches up at full pace once the run is over. Searches stay exact meanwhile (stale devices' files are read).
 */
const BUSY_WINDOW_MS = 1_000;
const BUSY_REST_FACTOR = 3;
const BUSY_REST_MAX_MS = 2_000;

/** What the upkeep needs of the appliance (the serve's services, or an opened appliance in a bench). */
export type IndexHost = Pick<AppServices, 'db' | 'snapshots'> & { log?: Logger | null };

/**
 * One step of upkeep on a pool worker (workers/index-refresh.ts): up to REFRESH_BATCH stale devices brought up to date.
 * Returns how many devices were looked at.
 */
export async function refreshSearchIndex(app: IndexHost, batch = REFRESH_BATCH): Promise<number> {
  if (countStaleDevices(app.db) === 0) return 0;
  const task = { kind: 'index-refresh', dbFile: app.db.name, nativePath: sqliteNativePath(), snapshotsRoot: app.snapshots.root, batch };
  const done = await runOffThread<IndexRefreshDone>(task, REFRESH_HARD_MS);
  for (const p of done.problems) app.log?.error({ device_id: p.deviceId, hash: p.hash, problem: p.problem }, 'snapshot integrity error');
  return done.looked;
}

/**
 * How long the upkeep waits before its next step: `looked` devices in the last step (null: it failed), which took
 * `stepMs`, the last engine record `sinceEngineWrite` ms ago. 0: go on at once.
 */
export function upkeepPause(looked: number | null, stepMs: number, sinceEngineWrite: number): number {
  if (looked === null) return RETRY_MS;
  if (looked < REFRESH_BATCH) return IDLE_MS;
  if (sinceEngineWrite < BUSY_WINDOW_MS) return Math.min(BUSY_REST_MAX_MS, Math.max(1, BUSY_REST_FACTOR * stepMs));
  return 0;
}

/** Runs the upkeep until stopped: step after step while devices are stale, then a look every IDLE_MS. */
export function startSearchIndexer(app: IndexHost, log: Logger | null): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      let looked: number | null = 0;
      const started = Date.now();
      try {
        looked = await refreshSearchIndex(app);
      } catch (err) {
        // Searches stay exact meanwhile (stale devices' files are read); one line a minute, not one per step.
        log?.warn({ err }, 'search index upkeep failed; retrying in a minute');
        looked = null;
      }
      if (stopped) break;
      const pause = upkeepPause(looked, Date.now() - started, msSinceEngineWrite(app.db));
      if (pause > 0) await new Promise<void>((r) => ((wake = r), (timer = setTimeout(r, pause))));
      else await new Promise<void>((r) => setImmediate(r));
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}

/** Devices whose index entry may be out of date (the search reads their files). */
export function searchIndexBacklog(db: DB): number {
  return countStaleDevices(db);
}

export interface IndexedSearchPlan {
  /** Devices with hits: their number, and those at positions [from, to) by name. */
  total: number;
  shown: LatestVersionRow[];
  /** Devices with a version the search covered (index entries plus stale devices read). */
  devicesSearched: number;
}

/**
 * The devices whose newest version holds a line matching `query`, from the index, or null when the index cannot
 * answer it exactly and fast (switched off, too many stale devices, no literal piece to look up, too many candidate
 * lines): the caller then reads the files. `scanStale` searches the stale devices' files and returns those with hits.
 */
export async function planIndexedSearch(
  app: AppServices,
  scope: Scope,
  query: SearchQuery,
  opts: { groupId?: number; templateId?: number; from: number; to: number },
  scanStale: (versions: LatestVersionRow[]) => Promise<Set<number>>,
): Promise<IndexedSearchPlan | null> {
  const { db } = app;
  if (!app.config.performance.search_index) return null;
  const terms = requiredTerms(query);
  if (terms === null || countStaleDevices(db) > MAX_STALE_FOR_INDEX) return null;
  // Every matching line holds each piece: the candidates are the lines holding them all.
  if (countCandidateLines(db, terms, MAX_CANDIDATE_LINES + 1) > MAX_CANDIDATE_LINES) return null;
  const matches = lineMatcher(query);
  const lineIds = listCandidateLines(db, terms)
    .filter((l) => matches(l.text))
    .map((l) => l.id);
  const filter: IndexedDeviceFilter = {
    groupIds: scope.all ? null : [...scope.groupIds],
    deviceIds:
      opts.groupId !== undefined || opts.templateId !== undefined ? listDeviceIds(db, scope, { group_id: opts.groupId, template_id: opts.templateId }) : null,
  };
  const staleVersions = listLatestVersionsOf(db, listStaleDeviceIds(db, filter));
  const staleHits = staleVersions.length ? await scanStale(staleVersions) : new Set<number>();
  const indexedFirst = opts.to > 0 ? listIndexedDevices(db, lineIds, filter, opts.to) : [];
  const staleFirst = staleVersions.filter((v) => staleHits.has(v.device_id)).map((v) => ({ id: v.device_id, name: v.device_name }));
  // By name as SQLite orders them (BINARY: the bytes of UTF-8), the file scan's order; only the shown ones' versions are read.
  const byName = [...indexedFirst, ...staleFirst].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const shown = listLatestVersionsOf(
    db,
    byName.slice(opts.from, opts.to).map((d) => d.id),
  );
  return {
    total: countIndexedDevices(db, lineIds, filter) + staleHits.size,
    shown,
    devicesSearched: countIndexedVersions(db, filter) + staleVersions.length,
  };
}
