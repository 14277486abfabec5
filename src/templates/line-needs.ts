// What a line must hold for a pattern to match it (a text at its start past its indentation, or anywhere): a string
// test that spares most lines most regex tests. Read from the pattern's source, conservatively: null when not sure.
/** Characters with a meaning of their own in a pattern (JavaScript and RE2 alike): a literal run stops at one. */
const SPECIAL = new Set([...'\\^$.|?*+()[]{}']);
/** Quantifiers: the character (or group) before one is optional or repeated. */
const QUANTIFIER = new Set([...'?*+{']);
/** Whitespace the line's leading whitespace may hold, as a pattern writes it right after `^`. */
const LEADING_SPACE = ['\\s*', '\\s+', '\\s?', '\\s', ' *', ' +', ' ?', '\\t', ' '];

/**
 * The literal text at `source[i]` up to the next special character, an escaped punctuation character counting as
 * itself; the last character is dropped when a quantifier follows it. Returns the text and where it stopped.
 */
function literalRun(source: string, i: number): { text: string; end: number } {
  let text = '';
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1];
      // \s, \d, \b, \x41 ...: a class or an escape sequence, not a literal.
      if (next === undefined || /[0-9A-Za-z]/.test(next)) break;
      text += next;
      i += 2;
    } else if (SPECIAL.has(c)) {
      break;
    } else {
      text += c;
      i++;
    }
  }
  if (QUANTIFIER.has(source[i] ?? '')) text = text.slice(0, -1);
  return { text, end: i };
}

/** The top-level alternatives of the group whose body starts at `i`, and where the group ends; null if not well formed. */
function alternatives(source: string, i: number): { alts: string[]; end: number } | null {
  const alts: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = i;
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      if (depth === 0) {
        alts.push(source.slice(start, i));
        return { alts, end: i + 1 };
      }
      depth--;
    } else if (c === '|' && depth === 0) {
      alts.push(source.slice(start, i));
      start = i + 1;
    }
  }
  return null;
}

/** Where a line's text must be for a pattern to match it: at its start past its leading whitespace, or anywhere. */
export interface LineNeed {
  readonly at: 'start' | 'anywhere';
  /** One of these must be there. */
  readonly texts: readonly string[];
}

/** The literal texts a pattern must match at `source[i]`: a literal run, or each alternative's of a `(?:...)` group. */
function literalsAt(source: string, i: number): string[] | null {
  if (source.startsWith('(?:', i)) {
    const group = alternatives(source, i + 3);
    if (!group || QUANTIFIER.has(source[group.end] ?? '')) return null;
    const texts: string[] = [];
    for (const alt of group.alts) {
      const { text } = literalRun(alt, 0);
      if (text === '') return null;
      texts.push(text);
    }
    return texts;
  }
  const { text } = literalRun(source, i);
  return text === '' ? null : [text];
}

/** `i` past the whitespace and word-boundary tokens at `source[i]` (`\s*`, ` +`, `\b` ...). */
function skipSpace(source: string, i: number, tokens: readonly string[]): number {
  for (let skipped = true; skipped;) {
    skipped = false;
    for (const t of tokens) {
      if (source.startsWith(t, i)) {
        i += t.length;
        skipped = true;
        break;
      }
    }
  }
  return i;
}

/**
 * What a line must hold for `source` to match it, read from the pattern; null when the pattern does not say (a flag
 * group, an optional start, a class first ...). Anchored: `^\s*ip ospf ...` needs "ip ospf " at the start of the line
 * past its leading whitespace, `^\s+(?:password|secret) ...` "password" or "secret" there. Not anchored:
 * `\bneighbor \S+ password ...` needs "neighbor " anywhere. A necessary condition only: the pattern still decides.
 */
export function lineNeed(source: string): LineNeed | null {
  if (source.startsWith('^')) {
    const texts = literalsAt(source, skipSpace(source, 1, LEADING_SPACE));
    // A text starting with whitespace would be looked for past the whitespace: not sure, then.
    return texts && !texts.some((t) => /^\s/.test(t)) ? { at: 'start', texts } : null;
  }
  const texts = literalsAt(source, skipSpace(source, 0, ['\\b', ...LEADING_SPACE]));
  return texts ? { at: 'anywhere', texts } : null;
}

/** A whitespace character as `\s` and trimStart see it. */
function isSpace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 160 ||
    c === 5760 ||
    (c >= 8192 && c <= 8202) ||
    c === 8232 ||
    c === 8233 ||
    c === 8239 ||
    c === 8287 ||
    c === 12288 ||
    c === 65279
  );
}

/** Where a line's text starts past its leading whitespace. */
export function leadIndex(line: string): number {
  let i = 0;
  while (i < line.length && isSpace(line.charCodeAt(i))) i++;
  return i;
}

/** Whether `line` (its text starting at `lead`) holds what `need` asks for (null: no condition). */
export function meetsNeed(line: string, lead: number, need: LineNeed | null): boolean {
  if (need === null) return true;
  if (need.at === 'start') {
    for (const t of need.texts) if (line.startsWith(t, lead)) return true;
  } else {
    for (const t of need.texts) if (line.includes(t)) return true;
  }
  return false;
}
