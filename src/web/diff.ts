// Comparing two stored versions: side-by-side rows and unified hunks (the `diff` package), optionally without ignored lines.
import { diffLines, structuredPatch } from 'diff';
import { compilePattern } from '../engine/normalise';

export interface SideRow {
  kind: 'same' | 'del' | 'add' | 'change' | 'skip';
  left: { n: number; text: string } | null;
  right: { n: number; text: string } | null;
  /** For "skip": how many unchanged lines were folded. */
  skipped?: number;
}

export interface UnifiedHunk {
  header: string;
  lines: { kind: 'same' | 'del' | 'add'; text: string }[];
}

export interface DiffResult {
  identical: boolean;
  added: number;
  removed: number;
  rows: SideRow[];
  hunks: UnifiedHunk[];
}

const CONTEXT = 3;

/** Drop the lines an ignore pattern matches (the same per-line rule as the change fingerprint). */
export function withoutIgnored(text: string, patterns: readonly string[]): string {
  if (patterns.length === 0) return text;
  const res = patterns.map((p) => compilePattern(p));
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

export function compareTexts(a: string, b: string, names: { a: string; b: string }): DiffResult {
  const parts = diffLines(a, b);
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
  const patch = structuredPatch(names.a, names.b, a, b, '', '', { context: CONTEXT });
  const hunks: UnifiedHunk[] = patch.hunks.map((h) => ({
    header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
    lines: h.lines
      .filter((l) => !l.startsWith('\\'))
      .map((l) => ({ kind: l[0] === '+' ? ('add' as const) : l[0] === '-' ? ('del' as const) : ('same' as const), text: l.slice(1) })),
  }));
  return { identical: added === 0 && removed === 0, added, removed, rows, hunks };
}

/** The unified diff as text (download, or the internal API). */
export function unifiedText(r: DiffResult, names: { a: string; b: string }): string {
  if (r.identical) return '';
  const out = [`--- ${names.a}`, `+++ ${names.b}`];
  for (const h of r.hunks) {
    out.push(h.header);
    for (const l of h.lines) out.push((l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' ') + l.text);
  }
  return out.join('\n') + '\n';
}
