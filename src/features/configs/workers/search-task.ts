// The worker side of the configuration search: reads snapshot files, matches line by line, streams hits, stops at the deadline.
import { compileRe2 } from '../../../lib/re2';
import { SnapshotIntegrityError } from '../../../store/snapshots';
import { splitLines } from './index-lines';
import { readSnapshotText } from './snapshot-text';

export interface SearchQuery {
  query: string;
  mode: 'text' | 'regex';
  caseSensitive: boolean;
}

export interface SearchHit {
  deviceId: number;
  deviceName: string;
  backupId: string;
  startedAt: number;
  /**
   * The matches with their context lines, already as HTML (one <pre class="context"> per group of consecutive
   * lines, escaped, the matches in <mark>, each line number a link to that line of the version): built here
   * because rendering thousands of lines took 50-80 ms of the event loop per search. Empty for a hit outside
   * the task's `window` (a page of hits shows only its own).
   */
  blocksHtml: string;
  matchCount: number;
  /** The matching lines themselves, for an export (`exportLines` tasks only). */
  lines?: { n: number; text: string }[];
}

type Block = { n: number; text: string; match: boolean }[];

export interface SearchTarget {
  deviceId: number;
  deviceName: string;
  backupId: string;
  startedAt: number;
  hash: string;
}

export interface SearchTask {
  query: SearchQuery;
  snapshotsRoot: string;
  targets: SearchTarget[];
  /** Epoch ms: past it the search stops and says it is partial. */
  deadline: number;
  maxDevicesWithHits: number;
  /** The hits (by position, from 0) whose HTML is built; default all. */
  window?: { from: number; to: number };
  /** An export: each hit carries up to `perDevice` matching lines (and no HTML); it stops at `total` lines (truncated). */
  exportLines?: { perDevice: number; total: number };
}

export interface SearchDone {
  devicesSearched: number;
  /** Stopped at the device cap. */
  truncated: boolean;
  /** Stopped at the time budget. */
  partial: boolean;
  unreadable: { backupId: string; hash: string; problem: string }[];
}

const MAX_MATCHES_PER_DEVICE = 20;
const CONTEXT = 2;
/** Lines between two looks at the clock. */
const CLOCK_EVERY = 512;

/** The line test of a query: a plain substring, or an RE2 pattern (linear time, whatever the user typed). */
export function lineMatcher(q: SearchQuery): (line: string) => boolean {
  if (q.mode === 'text') {
    const needle = q.caseSensitive ? q.query : q.query.toLowerCase();
    return q.caseSensitive ? (l) => l.includes(needle) : (l) => l.toLowerCase().includes(needle);
  }
  const re = compileRe2(q.query, { caseInsensitive: !q.caseSensitive });
  return (l) => re.test(l);
}

/** Bounds of highlighting one line: past these, the whole line is marked (a line of megabytes, a pattern matching everywhere). */
const MARK_MAX_LINE = 4_000;
const MARK_MAX_RANGES = 100;

/** Where the query matches in a line, as [start, end) ranges; null when they cannot be told (the whole line is marked). */
export function matchRanges(q: SearchQuery): (line: string) => [number, number][] | null {
  if (q.mode === 'text') {
    const needle = q.caseSensitive ? q.query : q.query.toLowerCase();
    return (line) => {
      if (line.length > MARK_MAX_LINE) return null;
      const hay = q.caseSensitive ? line : line.toLowerCase();
      // Lower-casing may change a string's length (rare letters): then the indices would not fit the line.
      if (hay.length !== line.length) return null;
      const out: [number, number][] = [];
      for (let i = hay.indexOf(needle); i >= 0 && out.length < MARK_MAX_RANGES; i = hay.indexOf(needle, i + needle.length)) out.push([i, i + needle.length]);
      return out.length ? out : null;
    };
  }
  const re = compileRe2(q.query, { caseInsensitive: !q.caseSensitive });
  return (line) => {
    if (line.length > MARK_MAX_LINE) return null;
    const m = re.matcher(line);
    const out: [number, number][] = [];
    let from = 0;
    while (from <= line.length && out.length < MARK_MAX_RANGES && m.find(from)) {
      const [start, end] = [m.start(), m.end()];
      if (end > start) out.push([start, end]);
      from = end > start ? end : end + 1;
    }
    return out.length ? out : null;
  };
}

/** Runs one search; each hit goes to `emit` as soon as it is found, so a terminated worker still leaves its hits. */
export function runSearch(task: SearchTask, emit: (hit: SearchHit) => void): SearchDone {
  const matcher = lineMatcher(task.query);
  const ranges = matchRanges(task.query);
  const window = task.window ?? { from: 0, to: Number.MAX_SAFE_INTEGER };
  const keep = task.exportLines?.perDevice ?? MAX_MATCHES_PER_DEVICE;
  let exported = 0;
  const done: SearchDone = { devicesSearched: 0, truncated: false, partial: false, unreadable: [] };
  let hits = 0;
  let sinceClock = 0;
  const late = () => Date.now() > task.deadline;
  for (const t of task.targets) {
    if (hits >= task.maxDevicesWithHits || (task.exportLines && exported >= task.exportLines.total)) {
      done.truncated = true;
      break;
    }
    if (late()) {
      done.partial = true;
      break;
    }
    let text: string | null;
    try {
      text = readSnapshotText(task.snapshotsRoot, t.hash);
    } catch (err) {
      if (!(err instanceof SnapshotIntegrityError)) throw err;
      done.unreadable.push({ backupId: t.backupId, hash: t.hash, problem: err.message });
      continue;
    }
    done.devicesSearched++;
    if (text === null) {
      done.unreadable.push({ backupId: t.backupId, hash: t.hash, problem: 'snapshot file missing' });
      continue;
    }
    const lines = splitLines(text);
    const matched: number[] = [];
    let count = 0;
    for (let i = 0; i < lines.length; i++) {
      if (++sinceClock >= CLOCK_EVERY) {
        sinceClock = 0;
        if (late()) {
          done.partial = true;
          break;
        }
      }
      if (matcher(lines[i])) {
        count++;
        if (matched.length < keep) matched.push(i);
      }
    }
    if (count > 0) {
      const shown = hits >= window.from && hits < window.to;
      hits++;
      exported += matched.length;
      const link = `/devices/${t.deviceId}/backups/${encodeURIComponent(t.backupId)}`;
      emit({
        deviceId: t.deviceId,
        deviceName: t.deviceName,
        backupId: t.backupId,
        startedAt: t.startedAt,
        blocksHtml: shown && task.exportLines === undefined ? blocksToHtml(contextBlocks(lines, matched), link, ranges) : '',
        matchCount: count,
        lines: task.exportLines !== undefined ? matched.map((i) => ({ n: i + 1, text: lines[i] })) : undefined,
      });
    }
    if (done.partial) break;
  }
  return done;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The blocks as the search page shows them: numbered lines linked to the version's line, the matches in <mark>. */
function blocksToHtml(blocks: Block[], link: string, ranges: (line: string) => [number, number][] | null): string {
  const line = (l: Block[number]) => {
    const num = `<a class="ln-link" href="${link}#L${l.n}" aria-label="line ${l.n}">${String(l.n).padStart(5)}</a>  `;
    if (!l.match) return `<span class="ln">${num}${escapeHtml(l.text)}</span>`;
    const r = ranges(l.text);
    if (!r) return `<span class="ln match">${num}<mark>${escapeHtml(l.text)}</mark></span>`;
    let html = '';
    let at = 0;
    for (const [start, end] of r) {
      html += `${escapeHtml(l.text.slice(at, start))}<mark>${escapeHtml(l.text.slice(start, end))}</mark>`;
      at = end;
    }
    return `<span class="ln match">${num}${html}${escapeHtml(l.text.slice(at))}</span>`;
  };
  return blocks.map((b) => `<pre class="context">${b.map((l) => `${line(l)}\n`).join('')}</pre>`).join('');
}

/** Matching lines with CONTEXT lines around each; overlapping windows merge into one block. */
function contextBlocks(lines: string[], matched: number[]): Block[] {
  const set = new Set(matched);
  const blocks: Block[] = [];
  let current: Block = [];
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
