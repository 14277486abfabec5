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
  return { source, re: compileRe2(source), ...literalStart(source) };
}

/** A configuration's lines and where each first word occurs (built once per configuration judged). */
export class LineIndex {
  readonly lines: string[];
  private readonly byWord = new Map<string, number[]>();
  private readonly byPrefix = new Map<string, number[]>();

  constructor(text: string) {
    this.lines = splitLines(text);
    this.lines.forEach((line, i) => {
      const t = line.trimStart();
      if (!t) return;
      const sp = t.search(/\s/);
      const word = sp < 0 ? t : t.slice(0, sp);
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
      for (const i of c) if (p.re.test(this.lines[i])) out.push(i);
    } else {
      for (let i = 0; i < this.lines.length; i++) if (p.re.test(this.lines[i])) out.push(i);
    }
    return out;
  }

  /** The first capture group of `p` in line `i` (null when it did not take part). */
  capture(p: RulePattern, i: number): string | null {
    const m = p.re.matcher(this.lines[i]);
    return m.find() ? m.group(1) : null;
  }
}
