// Comparing two stored versions: side-by-side rows and unified hunks (the `diff` package, bounded), optionally without ignored lines.
import { diffLines, diffWordsWithSpace, structuredPatch } from 'diff';
import type { Logger } from 'pino';
import { usablePatterns } from '../../templates/patterns';
import type { BackupRow } from '../backups/backups.store';
import { SnapshotIntegrityError, type SnapshotStore } from '../../store/snapshots';
import { runOffThread } from './workers/pool';
import { readSnapshotText } from './workers/snapshot-text';
import { numberedLinesHtml, type NumberedText } from './numbered-lines';

/** A line cut into pieces, `mark` on the words that changed (word-level highlight of a changed line pair). */
export type WordParts = { text: string; mark: boolean }[];

export interface SideRow {
  kind: 'same' | 'del' | 'add' | 'change' | 'skip';
  left: { n: number; text: string; words?: WordParts } | null;
  right: { n: number; text: string; words?: WordParts } | null;
  /** For "skip": how many unchanged lines were folded. */
  skipped?: number;
}

export interface UnifiedHunk {
  header: string;
  lines: { kind: 'same' | 'del' | 'add'; text: string; words?: WordParts }[];
}

export interface DiffResult {
  identical: boolean;
  added: number;
  removed: number;
  rows: SideRow[];
  hunks: UnifiedHunk[];
  /**
   * The versions differ in more lines than the diff may align (DIFF_LIMITS): no rows, one hunk replacing the whole
   * file (left out of what the worker hands back), and `preview` holds the start of both versions to show side by side.
   */
  tooDifferent: boolean;
  preview: { left: string[]; right: string[]; leftLines: number; rightLines: number } | null;
}

/**
 * Bounds of one diff. Myers' algorithm costs about (lines of both) x (differing lines): two unrelated
 * 10,000-line files took 32 s unbounded. Beyond the edit length or the time, the view shows both versions.
 */
export const DIFF_LIMITS = { max_edit_length: 4_000, timeout_ms: 4_000, preview_lines: 2_000 } as const;

/**
 * Bounds of the word-level highlight: lines longer than this are shown whole, and past this many changed pairs
 * in one diff the rest are too (each pair is a small Myers diff of its words; a rewritten file would be thousands).
 */
export const WORD_LIMITS = { max_line_chars: 1_000, max_pairs: 2_000, max_edit_length: 200 } as const;

/** The changed words of a line pair, or undefined when the pair is past the bounds or shares nothing. */
export function wordParts(left: string, right: string): { left: WordParts; right: WordParts } | undefined {
  if (left.length > WORD_LIMITS.max_line_chars || right.length > WORD_LIMITS.max_line_chars) return undefined;
  const parts = diffWordsWithSpace(left, right, { maxEditLength: WORD_LIMITS.max_edit_length });
  if (!parts || !parts.some((p) => !p.added && !p.removed && p.value.trim() !== '')) return undefined;
  return {
    left: parts.filter((p) => !p.added).map((p) => ({ text: p.value, mark: p.removed })),
    right: parts.filter((p) => !p.removed).map((p) => ({ text: p.value, mark: p.added })),
  };
}

/** Adds word parts to the changed line pairs of the rows and hunks, up to WORD_LIMITS.max_pairs in all. */
function markWords(rows: SideRow[], hunks: UnifiedHunk[]): void {
  let budget = WORD_LIMITS.max_pairs;
  // The split rows and the unified hunks pair the same lines: each pair is compared once.
  const memo = new Map<string, ReturnType<typeof wordParts>>();
  const words = (l: string, r: string) => {
    const key = `${l}\n${r}`;
    if (!memo.has(key)) memo.set(key, wordParts(l, r));
    return memo.get(key);
  };
  for (const r of rows) {
    if (budget <= 0) break;
    if (r.kind !== 'change' || !r.left || !r.right) continue;
    budget--;
    const w = words(r.left.text, r.right.text);
    if (w) [r.left.words, r.right.words] = [w.left, w.right];
  }
  budget = WORD_LIMITS.max_pairs;
  for (const h of hunks) {
    // A run of removed lines followed by a run of added ones: the k-th of each form a pair, as in the split view.
    for (let i = 0; i < h.lines.length && budget > 0;) {
      let d = i;
      while (d < h.lines.length && h.lines[d].kind === 'del') d++;
      let a = d;
      while (a < h.lines.length && h.lines[a].kind === 'add') a++;
      const pairs = Math.min(d - i, a - d);
      for (let k = 0; k < pairs && budget > 0; k++, budget--) {
        const w = words(h.lines[i + k].text, h.lines[d + k].text);
        if (w) [h.lines[i + k].words, h.lines[d + k].words] = [w.left, w.right];
      }
      i = a > i ? a : i + 1;
    }
  }
}

const CONTEXT = 3;

/** Drop the lines an ignore pattern matches (the same per-line rule as the change fingerprint, RE2 for custom ones). */
export function withoutIgnored(text: string, patterns: readonly string[]): string {
  if (patterns.length === 0) return text;
  const res = usablePatterns(patterns);
  return text
    .split('\n')
    .filter((l) => !res.some((re) => re.test(l)))
    .join('\n');
}

function lines(value: string): string[] {
  const l = value.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

/** The diff of two texts, bounded by DIFF_LIMITS (CPU-heavy: callers on the server use diffVersions). */
export function compareTexts(a: string, b: string, names: { a: string; b: string }, opts: { words?: boolean } = {}): DiffResult {
  if (a === b) return { identical: true, added: 0, removed: 0, rows: [], hunks: [], tooDifferent: false, preview: null };
  const bounds = { maxEditLength: DIFF_LIMITS.max_edit_length, timeout: DIFF_LIMITS.timeout_ms };
  const parts = diffLines(a, b, bounds);
  if (parts === undefined) return tooDifferent(a, b);
  const rows: SideRow[] = [];
  let ln = 1;
  let rn = 1;
  let added = 0;
  let removed = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const ls = lines(p.value);
    if (!p.added && !p.removed) {
      // Long unchanged stretches fold to their first and last few lines.
      const keepHead = i === 0 ? 0 : CONTEXT;
      const keepTail = i === parts.length - 1 ? 0 : CONTEXT;
      if (ls.length > keepHead + keepTail + 1) {
        for (let k = 0; k < keepHead; k++) rows.push({ kind: 'same', left: { n: ln + k, text: ls[k] }, right: { n: rn + k, text: ls[k] } });
        rows.push({ kind: 'skip', left: null, right: null, skipped: ls.length - keepHead - keepTail });
        for (let k = ls.length - keepTail; k < ls.length; k++) rows.push({ kind: 'same', left: { n: ln + k, text: ls[k] }, right: { n: rn + k, text: ls[k] } });
      } else {
        ls.forEach((t, k) => rows.push({ kind: 'same', left: { n: ln + k, text: t }, right: { n: rn + k, text: t } }));
      }
      ln += ls.length;
      rn += ls.length;
    } else if (p.removed && parts[i + 1]?.added) {
      // A removal followed by an addition is shown as changed lines side by side.
      const adds = lines(parts[i + 1].value);
      const n = Math.max(ls.length, adds.length);
      for (let k = 0; k < n; k++) {
        const left = k < ls.length ? { n: ln + k, text: ls[k] } : null;
        const right = k < adds.length ? { n: rn + k, text: adds[k] } : null;
        rows.push({ kind: left && right ? 'change' : left ? 'del' : 'add', left, right });
      }
      removed += ls.length;
      added += adds.length;
      ln += ls.length;
      rn += adds.length;
      i++;
    } else if (p.removed) {
      ls.forEach((t, k) => rows.push({ kind: 'del', left: { n: ln + k, text: t }, right: null }));
      removed += ls.length;
      ln += ls.length;
    } else {
      ls.forEach((t, k) => rows.push({ kind: 'add', left: null, right: { n: rn + k, text: t } }));
      added += ls.length;
      rn += ls.length;
    }
  }
  const patch = structuredPatch(names.a, names.b, a, b, '', '', { context: CONTEXT, ...bounds });
  if (patch === undefined) return tooDifferent(a, b);
  const hunks: UnifiedHunk[] = patch.hunks.map((h) => ({
    header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
    lines: h.lines
      .filter((l) => !l.startsWith('\\'))
      .map((l) => ({ kind: l[0] === '+' ? ('add' as const) : l[0] === '-' ? ('del' as const) : ('same' as const), text: l.slice(1) })),
  }));
  if (opts.words !== false) markWords(rows, hunks);
  return { identical: added === 0 && removed === 0, added, removed, rows, hunks, tooDifferent: false, preview: null };
}

/** Too different to align: every line of one version replaced by every line of the other. */
function tooDifferent(a: string, b: string): DiffResult {
  const left = lines(a);
  const right = lines(b);
  const hunk: UnifiedHunk = {
    header: `@@ -${left.length ? 1 : 0},${left.length} +${right.length ? 1 : 0},${right.length} @@`,
    lines: [...left.map((text) => ({ kind: 'del' as const, text })), ...right.map((text) => ({ kind: 'add' as const, text }))],
  };
  const n = DIFF_LIMITS.preview_lines;
  return {
    identical: false,
    added: right.length,
    removed: left.length,
    rows: [],
    hunks: [hunk],
    tooDifferent: true,
    preview: { left: left.slice(0, n), right: right.slice(0, n), leftLines: left.length, rightLines: right.length },
  };
}

/**
 * What the server hands back: the result, and when asked for, the unified text or the internal API's JSON
 * body {identical, added, removed, unified}, both built off-thread (a too-different 10 MB pair is 20 MB of text).
 */
export type DiffView = DiffResult & { unified: string | null; json: string | null };

/** One side of a diff: a text, or a stored snapshot read on the worker (10 MB take ~0.1-0.4 s to read and verify). */
export type DiffSide = string | { hash: string };

type DiffAnswer = DiffView | { unreadable: { hash: string; problem: string } };

/**
 * Compares two versions (ignored lines dropped first) on a worker thread, so neither a large nor a very
 * different pair holds the event loop. `unified` asks for the unified text too (downloads, the internal API).
 * Null when a stored snapshot is missing or fails its hash check (logged).
 */
export async function diffVersions(
  a: DiffSide,
  b: DiffSide,
  names: { a: string; b: string },
  ignore: readonly string[],
  opts: { unified?: boolean; json?: boolean; snapshots?: SnapshotStore; log?: Logger | null } = {},
): Promise<DiffView | null> {
  const task = {
    kind: 'diff',
    a,
    b,
    names,
    ignore: [...ignore],
    unified: opts.unified === true,
    json: opts.json === true,
    snapshotsRoot: opts.snapshots?.root ?? null,
  };
  const r = await runOffThread<DiffAnswer>(task, DIFF_LIMITS.timeout_ms * 3 + 5_000);
  if ('unreadable' in r) {
    opts.log?.error({ hash: r.unreadable.hash, problem: r.unreadable.problem }, 'snapshot integrity error');
    return null;
  }
  return r;
}

/** The two stored versions of backup records, compared off the event loop; null when either has no usable text. */
export function diffBackups(
  app: { snapshots: SnapshotStore; log: Logger | null },
  a: Pick<BackupRow, 'success' | 'config_snapshot_hash'>,
  b: Pick<BackupRow, 'success' | 'config_snapshot_hash'>,
  names: { a: string; b: string },
  ignore: readonly string[],
  opts: { unified?: boolean; json?: boolean } = {},
): Promise<DiffView | null> {
  if (!a.success || !a.config_snapshot_hash || !b.success || !b.config_snapshot_hash) return Promise.resolve(null);
  return diffVersions({ hash: a.config_snapshot_hash }, { hash: b.config_snapshot_hash }, names, ignore, { ...opts, snapshots: app.snapshots, log: app.log });
}

/**
 * A stored version's text read and verified on a worker (a 32 MB configuration takes over a second): the text,
 * or null for a failed backup or a missing or corrupt snapshot (logged), as readBackupText.
 */
export async function readBackupTextOffThread(
  app: { snapshots: SnapshotStore; log: Logger | null },
  row: Pick<BackupRow, 'id' | 'success' | 'config_snapshot_hash'>,
): Promise<string | null> {
  if (!row.success || !row.config_snapshot_hash) return null;
  const r = await runOffThread<{ text: string } | { unreadable: { hash: string; problem: string } }>(
    { kind: 'read', hash: row.config_snapshot_hash, snapshotsRoot: app.snapshots.root },
    DIFF_LIMITS.timeout_ms * 3 + 5_000,
  );
  if ('text' in r) return r.text;
  app.log?.error({ backup_id: row.id, hash: r.unreadable.hash, problem: r.unreadable.problem }, 'snapshot integrity error');
  return null;
}

/**
 * A stored version as the configuration view shows it: its lines numbered and anchored (#L12), as HTML built on
 * a worker (see numberedLinesHtml); null as readBackupTextOffThread.
 */
export async function readBackupViewOffThread(
  app: { snapshots: SnapshotStore; log: Logger | null },
  row: Pick<BackupRow, 'id' | 'success' | 'config_snapshot_hash'>,
): Promise<NumberedText | null> {
  if (!row.success || !row.config_snapshot_hash) return null;
  const r = await runOffThread<{ text: string; numbered?: NumberedText } | { unreadable: { hash: string; problem: string } }>(
    { kind: 'read', hash: row.config_snapshot_hash, snapshotsRoot: app.snapshots.root, numbered: true },
    DIFF_LIMITS.timeout_ms * 3 + 5_000,
  );
  if ('numbered' in r && r.numbered) return r.numbered;
  if ('unreadable' in r) app.log?.error({ backup_id: row.id, hash: r.unreadable.hash, problem: r.unreadable.problem }, 'snapshot integrity error');
  return null;
}

/** The worker side of readBackupTextOffThread (and, `numbered`, of readBackupViewOffThread: the HTML instead of the text). */
export function readTask(req: {
  hash: string;
  snapshotsRoot: string;
  numbered?: boolean;
}): { text: string; numbered?: NumberedText } | { unreadable: { hash: string; problem: string } } {
  try {
    const text = readSnapshotText(req.snapshotsRoot, req.hash);
    if (text !== null && req.numbered) return { text: '', numbered: numberedLinesHtml(text) };
    return text === null ? { unreadable: { hash: req.hash, problem: 'snapshot file missing' } } : { text };
  } catch (err) {
    if (!(err instanceof SnapshotIntegrityError)) throw err;
    return { unreadable: { hash: req.hash, problem: err.message } };
  }
}

/** The worker side of diffVersions. */
export function diffTask(req: {
  a: DiffSide;
  b: DiffSide;
  names: { a: string; b: string };
  ignore: string[];
  unified: boolean;
  json?: boolean;
  snapshotsRoot: string | null;
}): DiffAnswer {
  const texts: string[] = [];
  for (const side of [req.a, req.b]) {
    if (typeof side === 'string') {
      texts.push(side);
      continue;
    }
    let text: string | null;
    try {
      text = req.snapshotsRoot ? readSnapshotText(req.snapshotsRoot, side.hash) : null;
    } catch (err) {
      if (!(err instanceof SnapshotIntegrityError)) throw err;
      return { unreadable: { hash: side.hash, problem: err.message } };
    }
    if (text === null) return { unreadable: { hash: side.hash, problem: 'snapshot file missing' } };
    texts.push(text);
  }
  // Word marks are for the page; a patch or the internal API's JSON has no use for them.
  const words = !req.unified && !req.json;
  const r = compareTexts(withoutIgnored(texts[0], req.ignore), withoutIgnored(texts[1], req.ignore), req.names, { words });
  const unified = req.unified || req.json ? unifiedText(r, req.names) : null;
  const json = req.json ? JSON.stringify({ identical: r.identical, added: r.added, removed: r.removed, unified }) : null;
  // A whole-file hunk is big and only the unified text needs it; the page shows the preview.
  return { ...r, hunks: r.tooDifferent ? [] : r.hunks, unified: req.json ? null : unified, json };
}

/** The unified diff as text (download, or the internal API). */
export function unifiedText(r: DiffResult | DiffView, names: { a: string; b: string }): string {
  if ('unified' in r && r.unified !== null) return r.unified;
  if (r.identical) return '';
  const out = [`--- ${names.a}`, `+++ ${names.b}`];
  for (const h of r.hunks) {
    out.push(h.header);
    for (const l of h.lines) out.push((l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' ') + l.text);
  }
  return out.join('\n') + '\n';
}
