// The template pattern compiler (JavaScript for built-in patterns, RE2 for user ones) and the change fingerprint.
import { createHash } from 'node:crypto';
import { PatternError, compileRe2, re2LinePattern, re2ReplaceAll, type LinePattern } from '../lib/re2';
import { trustedPattern } from './defaults';
import { isBuiltinPattern } from './index';
import { lineNeed, type LineNeed } from './line-needs';

/** Compiled patterns by source; bounded (templates repeat, a few hundred distinct patterns is the norm). */
const CACHE_MAX = 2_000;
const patternCache = new Map<string, LinePattern>();
/**
 * A redaction: `to` is replacement text ("$1 <redacted>") or, for a rule with a `secret` group, what that group becomes.
 * `need`: what a line it can change holds (lineNeed; null: anything).
 */
export type Redaction = ((line: string, to: string | ((secret: string) => string)) => string) & { readonly need: LineNeed | null };
const redactCache = new Map<string, Redaction>();

function remember<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(key, v);
  }
  return v;
}

/**
 * Compiles a template line pattern: built-in sources (trusted code) as JavaScript regexes (a leading "(?i)" as the "i"
 * flag), anything else with RE2 (linear time, whatever the pattern). Throws PatternError when RE2 cannot compile it
 * (a backreference, a lookaround ...).
 */
export function compilePattern(source: string): LinePattern {
  return remember(patternCache, source, () => (isBuiltinPattern(source) ? trustedPattern(source) : re2LinePattern(source)));
}

/**
 * A redact rule as a function replacing every match in a line. Given text, JavaScript's "$1" replacement rules
 * apply either way; given a function, each match keeps its text and only its `secret` group goes through it.
 */
export function compileRedaction(source: string): Redaction {
  return remember(redactCache, source, () => Object.assign(redactionOf(source), { need: lineNeed(source) }));
}

/** A redact rule's replacing function: JavaScript for a built-in pattern, RE2 for a user's. */
function redactionOf(source: string): (line: string, to: string | ((secret: string) => string)) => string {
  if (isBuiltinPattern(source)) {
    const re = new RegExp(source, 'g');
    const withIndices = new RegExp(source, 'gd');
    // Most lines match no rule: a plain test answers that without building match indices (the costly part).
    const probe = new RegExp(source);
    return (line, to) => {
      if (!probe.test(line)) return line;
      if (typeof to === 'string') return line.replace(re, to);
      let out = '';
      let last = 0;
      for (const m of line.matchAll(withIndices)) {
        const span = m.indices?.groups?.secret;
        if (!span || span[1] <= span[0]) continue;
        out += line.slice(last, span[0]) + to(line.slice(span[0], span[1]));
        last = span[1];
      }
      return out + line.slice(last);
    };
  }
  const re = compileRe2(source);
  const secretGroup = re.namedGroups().secret;
  return (line, to) => {
    if (typeof to === 'string') return re2ReplaceAll(re, line, to);
    if (secretGroup === undefined || !re.test(line)) return line;
    const m = re.matcher(line);
    let out = '';
    let last = 0;
    let from = 0;
    while (from <= line.length && m.find(from)) {
      const start = m.start(secretGroup);
      const end = m.end(secretGroup);
      if (start >= 0 && end > start) {
        out += line.slice(last, start) + to(line.slice(start, end));
        last = end;
      }
      from = m.end() > m.start() ? m.end() : m.end() + 1;
    }
    return out + line.slice(last);
  };
}

/**
 * sha256 (hex) of the stored text without the lines matching an ignore pattern: equal fingerprints mean "unchanged".
 * An ignore pattern that no longer compiles is skipped (only change detection is affected; `db check` reports it).
 */
export function changeFingerprint(text: string, ignore_patterns: readonly string[]): string {
  const ignore = usablePatterns(ignore_patterns);
  const plain = text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
  const hash = createHash('sha256');
  if (ignore.length === 0) return hash.update(plain).digest('hex');
  // The kept lines joined with LF, hashed run by run of consecutive kept lines: no array of a million lines, no copy
  // of the text (a stored configuration can be 30 MB).
  let run = -1;
  let first = true;
  const flush = (end: number) => {
    if (run < 0) return;
    hash.update(first ? plain.slice(run, end) : '\n' + plain.slice(run, end));
    first = false;
    run = -1;
  };
  for (let start = 0; start <= plain.length;) {
    let end = plain.indexOf('\n', start);
    if (end < 0) end = plain.length;
    const line = plain.slice(start, end);
    if (ignore.some((re) => re.test(line))) flush(start - 1);
    else if (run < 0) run = start;
    start = end + 1;
  }
  flush(plain.length);
  return hash.digest('hex');
}

/** The compiled patterns among `sources`, leaving out those that do not compile. */
export function usablePatterns(sources: readonly string[]): LinePattern[] {
  const out: LinePattern[] = [];
  for (const p of sources) {
    try {
      out.push(compilePattern(p));
    } catch (err) {
      if (!(err instanceof PatternError)) throw err;
    }
  }
  return out;
}

/** Where another tool took a secret out of an imported configuration (RANCID's and Oxidized's markers, stored as this). */
export const REMOVED_SECRET = '<removed>';
const SECRET_AT = /<secret:[0-9a-f]{8}>|<removed>/;
const COMMENT = /^\s*[!#]/;
const MIGRATED = 'migrated:';

/**
 * The fingerprint of a version imported from another tool: `migrated:<lenient>:<full>`. The full part (changeFingerprint)
 * compares it with the next imported version; the lenient part compares it with the first live backup after it.
 * Lenient leaves out what the old tools add or lose and a live capture does not: the leading comment lines (their
 * headers), bare comment separators (RANCID collapses runs of them), the order of top-level blocks (RANCID sorts
 * users, communities and routes) and secret values (each line holding a secret is reduced to its first two words: the
 * tools cut the value and often its type digit). Anything else that differs is still a change.
 */
export function importFingerprint(text: string, ignore_patterns: readonly string[]): string {
  return `${MIGRATED}${lenientFingerprint(text, ignore_patterns)}:${changeFingerprint(text, ignore_patterns)}`;
}

/** The change rule's comparison: `previous` and `current` fingerprints describe the same configuration. */
export function sameConfiguration(previous: string, current: string, lenient: () => string): boolean {
  const full = (f: string) => (f.startsWith(MIGRATED) ? f.slice(f.lastIndexOf(':') + 1) : f);
  if (previous.startsWith(MIGRATED) && !current.startsWith(MIGRATED)) {
    return previous.slice(MIGRATED.length, previous.lastIndexOf(':')) === lenient();
  }
  return full(previous) === full(current);
}

/**
 * The lenient half of importFingerprint, for the one comparison after an imported version (sameConfiguration): SHA-256
 * of the lenient keys, sorted, joined with LF. A top-level line's key is its own; an indented line's key is its
 * parent's, a NUL, then its own. So, with no NUL in the text, the sorted keys are the distinct top-level keys in order,
 * each repeated as often as it occurs and followed by its children's keys in order. The keys are never built as one
 * array of strings (a 30 MB configuration has a million of them): they are ranges of the text, sorted parent by
 * parent, and the sorted text is hashed as it is produced.
 */
export function lenientFingerprint(text: string, ignore_patterns: readonly string[]): string {
  const plain = text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
  const keys = lenientKeys(plain, usablePatterns(ignore_patterns));
  const hash = new TextHash();
  if (plain.includes('\0')) {
    // A NUL inside a line would upset the grouping: sort the whole keys.
    const all: string[] = [];
    let parent = '';
    for (let r = 0; r < keys.count; r++) {
      if (keys.top[r]) all.push((parent = keys.text(r)));
      else all.push(`${parent}\0${keys.text(r)}`);
    }
    for (const k of all.sort()) hash.key(k);
    return hash.digest();
  }
  const children = (parent: string, list: number[]) => {
    list.sort(keys.compare);
    for (const c of list) hash.key(parent + '\0' + keys.text(c));
  };
  // The lines before the first top-level line have the parent '': their keys sort before every other.
  const orphans: number[] = [];
  for (let r = 0; r < keys.count && !keys.top[r]; r++) orphans.push(r);
  children('', orphans);
  const tops: number[] = [];
  for (let r = 0; r < keys.count; r++) if (keys.top[r]) tops.push(r);
  tops.sort(keys.compare);
  for (let i = 0; i < tops.length;) {
    // Equal top-level keys: each one, then the children of all of them.
    const parent = keys.text(tops[i]);
    const list: number[] = [];
    do {
      hash.key(parent);
      for (let r = tops[i] + 1; r < keys.count && !keys.top[r]; r++) list.push(r);
      i++;
    } while (i < tops.length && keys.compare(tops[i - 1], tops[i]) === 0);
    children(parent, list);
  }
  return hash.digest();
}

/** The keys of the lines the lenient print keeps, in the text's order (lenientKeys). */
interface LenientKeys {
  count: number;
  /** 1 for a top-level line, 0 for an indented one. */
  top: Uint8Array;
  /** A line's own key (without its parent's). */
  text(r: number): string;
  /** Compares two lines' own keys as strings compare (UTF-16 code units), without building them. */
  compare: (a: number, b: number) => number;
}

/**
 * Lenient keys leave out blank and ignored lines, the leading comment lines and bare comment separators; a line
 * holding a secret is reduced to its first two words (a digit alone is not a word) and " <secret>", any other line to
 * itself without trailing blanks.
 */
function lenientKeys(plain: string, ignore: readonly LinePattern[]): LenientKeys {
  let lines = 1;
  for (let at = plain.indexOf('\n'); at >= 0; at = plain.indexOf('\n', at + 1)) lines++;
  // A key is the range [start, end) of the text or, for a line with a secret, secrets[-start - 1].
  const start = new Int32Array(lines);
  const end = new Int32Array(lines);
  const top = new Uint8Array(lines);
  const secrets: string[] = [];
  let count = 0;
  let header = true;
  for (let from = 0; from <= plain.length;) {
    let to = plain.indexOf('\n', from);
    if (to < 0) to = plain.length;
    const line = plain.slice(from, to);
    const skip = line.trim() === '' || ignore.some((re) => re.test(line)) || (COMMENT.test(line) && (header || /^\s*[!#]\s*$/.test(line)));
    if (!skip) {
      header = false;
      top[count] = /^\s/.test(line) ? 0 : 1;
      const at = SECRET_AT.exec(line);
      if (at) {
        const words = line
          .slice(0, at.index)
          .trim()
          .split(/\s+/)
          .filter((w) => !/^\d$/.test(w));
        secrets.push(words.slice(0, 2).join(' ') + ' <secret>');
        start[count] = -secrets.length;
      } else {
        start[count] = from;
        end[count] = from + line.trimEnd().length;
      }
      count++;
    }
    from = to + 1;
  }
  const text = (r: number) => (start[r] < 0 ? secrets[-start[r] - 1] : plain.slice(start[r], end[r]));
  const compare = (a: number, b: number) => {
    const sa = start[a] < 0 ? secrets[-start[a] - 1] : plain;
    const sb = start[b] < 0 ? secrets[-start[b] - 1] : plain;
    const ia = start[a] < 0 ? 0 : start[a];
    const ib = start[b] < 0 ? 0 : start[b];
    const la = (start[a] < 0 ? sa.length : end[a]) - ia;
    const lb = (start[b] < 0 ? sb.length : end[b]) - ib;
    for (let k = 0, n = Math.min(la, lb); k < n; k++) {
      const d = sa.charCodeAt(ia + k) - sb.charCodeAt(ib + k);
      if (d !== 0) return d;
    }
    return la - lb;
  };
  return { count, top, text, compare };
}

/** SHA-256 of keys joined with LF, fed in blocks (whole keys only: a surrogate pair is never cut). */
class TextHash {
  private readonly hash = createHash('sha256');
  private block = '';
  private first = true;

  key(k: string): void {
    this.block += this.first ? k : '\n' + k;
    this.first = false;
    if (this.block.length >= 64 * 1024) {
      this.hash.update(this.block);
      this.block = '';
    }
  }

  digest(): string {
    return this.hash.update(this.block).digest('hex');
  }
}
