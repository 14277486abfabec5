// Line patterns of rules, compiled once, and a per-configuration index by first word: a pattern anchored on a literal is tried only on the lines that can match it.
import type { RE2JS } from 're2js';
import { compileRe2 } from '../../lib/re2';
import { splitLines } from './hierarchy';

/** A compiled rule pattern and the literal every matching line's first word starts with (null: any line may match). */
export interface RulePattern {
  source: string;
  re: RE2JS;
  /** The first word (or its beginning) a match needs, trimmed of indentation. */
  literal: string | null;
  /** `literal` is the whole first word (a space or the end follows it in the pattern). */
  wholeWord: boolean;
  /**
   * Answers by line text, bounded (cleared when full): a fleet's configurations repeat most of their lines, and a map
   * lookup costs a small part of running the pattern. Per worker; gone with the compiled rule set.
   */
  seen: Map<string, boolean>;
  /** The same for captures: the first group's value, null when the group did not take part, false for no match. */
  captured: Map<string, string | null | false>;
}

/** Lines remembered per pattern: ~100 bytes each, so 100 rules hold at most a few tens of MB per worker. */
const SEEN_MAX = 2048;

function remember<V>(map: Map<string, V>, key: string, compute: () => V): V {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  const v = compute();
  if (map.size >= SEEN_MAX) map.clear();
  map.set(key, v);
  return v;
}

/** Whether `p` matches `line` (remembered by line text). */
export function testLine(p: RulePattern, line: string): boolean {
  return remember(p.seen, line, () => p.re.test(line));
}

/** The first capture group of `p` in `line`: its value, null when the group did not take part, false for no match. */
export function captureLine(p: RulePattern, line: string): string | null | false {
  return remember(p.captured, line, () => {
    const m = p.re.matcher(line);
    return m.find() ? m.group(1) : false;
  });
}

/**
 * The literal start of an anchored pattern: `^ntp server` needs lines whose first word is "ntp", `^\s*transport`
 * lines whose first word is "transport". Conservative: any alternation, flag group or character class before the
 * literal ends ends it, and a character made optional by the quantifier after it is not part of it.
 */
export function literalStart(source: string): { literal: string | null; wholeWord: boolean } {
  const none = { literal: null, wholeWord: false };
  if (!source.startsWith('^') || source.includes('|')) return none;
  let s = source.slice(1).replace(/^(\\s\*|\\s\+| \*| \+|\[ \\t\]\*)/, '');
  let lit = '';
  while (s.length && /^[A-Za-z0-9_-]/.test(s)) {
    lit += s[0];
    s = s.slice(1);
  }
  if (/^[?*{]/.test(s)) lit = lit.slice(0, -1);
  if (!lit) return none;
  return { literal: lit, wholeWord: /^( |\\s|\$)/.test(s) };
}

export function compileRulePattern(source: string): RulePattern {
  return { source, re: compileRe2(source), ...literalStart(source), seen: new Map(), captured: new Map() };
}

/** The first word of a line, indentation left out. */
export function firstWord(line: string): string {
  const t = line.trimStart();
  const sp = t.search(/\s/);
  return sp < 0 ? t : t.slice(0, sp);
}

/** Whether `p` matches `text`; a text whose first word cannot start a match is answered without running the pattern. */
export function patternMatches(p: RulePattern, text: string, word?: string): boolean {
  if (p.literal !== null) {
    const w = word ?? firstWord(text);
    if (p.wholeWord ? w !== p.literal : !w.startsWith(p.literal)) return false;
  }
  return testLine(p, text);
}

/** A configuration's lines and where each first word occurs (built once per configuration judged). */
export class LineIndex {
  readonly lines: string[];
  private readonly byWord = new Map<string, number[]>();
  private readonly byPrefix = new Map<string, number[]>();

  constructor(text: string) {
    this.lines = splitLines(text);
    this.lines.forEach((line, i) => {
      const word = firstWord(line);
      if (!word) return;
      let list = this.byWord.get(word);
      if (!list) this.byWord.set(word, (list = []));
      list.push(i);
    });
  }

  /** Indexes (0-based) of the lines `p` may match, in order. */
  candidates(p: RulePattern): readonly number[] | null {
    if (p.literal === null) return null;
    if (p.wholeWord) return this.byWord.get(p.literal) ?? [];
    let list = this.byPrefix.get(p.literal);
    if (!list) {
      list = [];
      for (const [w, idx] of this.byWord) if (w.startsWith(p.literal)) list.push(...idx);
      list.sort((a, b) => a - b);
      this.byPrefix.set(p.literal, list);
    }
    return list;
  }

  /** Indexes of the lines matching `p`. */
  matching(p: RulePattern): number[] {
    const out: number[] = [];
    const c = this.candidates(p);
    if (c) {
      for (const i of c) if (testLine(p, this.lines[i])) out.push(i);
    } else {
      for (let i = 0; i < this.lines.length; i++) if (testLine(p, this.lines[i])) out.push(i);
    }
    return out;
  }

  /** Each line matching `p` with its first capture group (null when the group did not take part): one pass of the matcher per line. */
  captures(p: RulePattern): { i: number; value: string | null }[] {
    const out: { i: number; value: string | null }[] = [];
    const c = this.candidates(p);
    const visit = (i: number) => {
      const value = captureLine(p, this.lines[i]);
      if (value !== false) out.push({ i, value });
    };
    if (c) c.forEach(visit);
    else for (let i = 0; i < this.lines.length; i++) visit(i);
    return out;
  }
}
