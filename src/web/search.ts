// Configuration search: a text or (vetted) regex over the newest stored version of every device in the user's scope.
import { ApiError } from '../errors';
import { findNestedQuantifier } from '../engine/templates/index';
import { listLatestSnapshots, readBackupText } from '../features/backups/backups.service';
import type { AppServices } from '../http/context';
import type { Scope } from '../identity/principal';

export interface SearchHit {
  deviceId: number;
  deviceName: string;
  backupId: string;
  startedAt: number;
  /** Groups of consecutive lines (match with context), each line with its number and whether it matched. */
  blocks: { n: number; text: string; match: boolean }[][];
  matchCount: number;
}

export interface SearchResult {
  hits: SearchHit[];
  devicesSearched: number;
  truncated: boolean;
  elapsedMs: number;
}

const MAX_PATTERN = 200;
const MAX_DEVICES_WITH_HITS = 200;
const MAX_MATCHES_PER_DEVICE = 20;
const CONTEXT = 2;
// A search stops here and says so, rather than holding the event loop (and every other user) for long.
const TIME_BUDGET_MS = 8_000;

// Snapshots are content-addressed, so a cached text can never be stale; the cap keeps memory bounded.
const CACHE_MAX_CHARS = 64 * 1024 * 1024;
const cache = new Map<string, string>();
let cachedChars = 0;

function cachedText(app: AppServices, hash: string, row: { id: string; success: number; config_snapshot_hash: string }): string | null {
  const hit = cache.get(hash);
  if (hit !== undefined) return hit;
  const text = readBackupText(app.db, app.snapshots, app.log, row);
  if (text !== null && text.length < CACHE_MAX_CHARS / 16) {
    while (cachedChars + text.length > CACHE_MAX_CHARS && cache.size) {
      const [k, v] = cache.entries().next().value as [string, string];
      cache.delete(k);
      cachedChars -= v.length;
    }
    cache.set(hash, text);
    cachedChars += text.length;
  }
  return text;
}

/** The matcher of a query; a regex with a nested unbounded repeat is refused (exponential backtracking). */
export function buildMatcher(query: string, mode: 'text' | 'regex', caseSensitive: boolean): (line: string) => boolean {
  if (query.length === 0 || query.length > MAX_PATTERN) throw ApiError.validation([{ field: 'q', message: `enter 1-${MAX_PATTERN} characters` }]);
  if (mode === 'text') {
    const needle = caseSensitive ? query : query.toLowerCase();
    return caseSensitive ? (l) => l.includes(needle) : (l) => l.toLowerCase().includes(needle);
  }
  let re: RegExp;
  try {
    re = new RegExp(query, caseSensitive ? '' : 'i');
  } catch (err) {
    throw ApiError.validation([{ field: 'q', message: `not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}` }]);
  }
  const nested = findNestedQuantifier(query);
  if (nested !== null) {
    throw ApiError.validation([{ field: 'q', message: `repeats a group that already repeats (near character ${nested + 1}), which can take exponential time; simplify it` }]);
  }
  return (l) => re.test(l);
}

export function searchConfigs(app: AppServices, scope: Scope, matcher: (line: string) => boolean): SearchResult {
  const started = performance.now();
  const hits: SearchHit[] = [];
  let truncated = false;
  let searched = 0;
  for (const row of listLatestSnapshots(app.db, scope)) {
    if (hits.length >= MAX_DEVICES_WITH_HITS || performance.now() - started > TIME_BUDGET_MS) {
      truncated = true;
      break;
    }
    searched++;
    const text = cachedText(app, row.config_snapshot_hash, { id: row.backup_id, success: 1, config_snapshot_hash: row.config_snapshot_hash });
    if (text === null) continue;
    const lines = text.split('\n');
    const matched: number[] = [];
    let count = 0;
    for (let i = 0; i < lines.length; i++) {
      if (matcher(lines[i])) {
        count++;
        if (matched.length < MAX_MATCHES_PER_DEVICE) matched.push(i);
      }
    }
    if (count === 0) continue;
    hits.push({ deviceId: row.device_id, deviceName: row.device_name, backupId: row.backup_id, startedAt: row.started_at, blocks: contextBlocks(lines, matched), matchCount: count });
  }
  return { hits, devicesSearched: searched, truncated, elapsedMs: Math.round(performance.now() - started) };
}

/** Matching lines with CONTEXT lines around each; overlapping windows merge into one block. */
function contextBlocks(lines: string[], matched: number[]): SearchHit['blocks'] {
  const set = new Set(matched);
  const blocks: SearchHit['blocks'] = [];
  let current: SearchHit['blocks'][number] = [];
  let lastEnd = -1;
  for (const m of matched) {
    const from = Math.max(0, m - CONTEXT);
    const to = Math.min(lines.length - 1, m + CONTEXT);
    if (from > lastEnd + 1 && current.length) {
      blocks.push(current);
      current = [];
    }
    for (let i = Math.max(from, lastEnd + 1); i <= to; i++) current.push({ n: i + 1, text: lines[i], match: set.has(i) });
    lastEnd = Math.max(lastEnd, to);
  }
  if (current.length) blocks.push(current);
  return blocks;
}
