// The worker side of the configuration search: reads snapshot files, matches line by line, streams hits, stops at the deadline.
import { re2LinePattern } from '../../lib/re2';
import { SnapshotIntegrityError } from '../../store/snapshots';
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
   * lines, escaped): built here because rendering thousands of lines took 50-80 ms of the event loop per search.
   */
  blocksHtml: string;
  matchCount: number;
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
  const re = re2LinePattern(q.query, { caseInsensitive: !q.caseSensitive });
  return (l) => re.test(l);
}

/** Runs one search; each hit goes to `emit` as soon as it is found, so a terminated worker still leaves its hits. */
export function runSearch(task: SearchTask, emit: (hit: SearchHit) => void): SearchDone {
  const matcher = lineMatcher(task.query);
  const done: SearchDone = { devicesSearched: 0, truncated: false, partial: false, unreadable: [] };
  let hits = 0;
  let sinceClock = 0;
  const late = () => Date.now() > task.deadline;
  for (const t of task.targets) {
    if (hits >= task.maxDevicesWithHits) {
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
    const lines = text.split('\n');
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
        if (matched.length < MAX_MATCHES_PER_DEVICE) matched.push(i);
      }
    }
    if (count > 0) {
      hits++;
      emit({
        deviceId: t.deviceId,
        deviceName: t.deviceName,
        backupId: t.backupId,
        startedAt: t.startedAt,
        blocksHtml: blocksToHtml(contextBlocks(lines, matched)),
        matchCount: count,
      });
    }
    if (done.partial) break;
  }
  return done;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The blocks as the search page shows them: numbered lines, the matching ones marked. */
function blocksToHtml(blocks: Block[]): string {
  return blocks
    .map(
      (b) =>
        `<pre class="context">${b.map((l) => `<span class="${l.match ? 'ln match' : 'ln'}">${escapeHtml(`${String(l.n).padStart(5)}  ${l.text}`)}</span>\n`).join('')}</pre>`,
    )
    .join('');
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
