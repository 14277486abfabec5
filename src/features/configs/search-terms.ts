// The literal pieces every matching line must contain, found in a search query: what the line index is asked for first.
import type { SearchQuery } from './workers/search-task';

/** The trigram index cannot look up pieces shorter than this. */
const MIN_TERM = 3;

/**
 * Lower-cased ASCII pieces (3+ characters) that every line matching `q` contains once lower-cased, or null when none
 * can be told (the index then cannot narrow the search). Only ASCII: JavaScript lower-cases an ASCII letter alone,
 * whatever surrounds it, so a line holding the piece holds its lower-cased form in the lower-cased line; a piece of
 * another script may not (Greek final sigma). The caller still checks each candidate line with the real matcher.
 */
export function requiredTerms(q: SearchQuery): string[] | null {
  const pieces = q.mode === 'text' ? [q.query] : regexLiterals(q.query);
  if (pieces === null) return null;
  const terms = new Set<string>();
  for (const piece of pieces) for (const run of piece.toLowerCase().split(/[^\x20-\x7e]+/)) if (run.length >= MIN_TERM) terms.add(run);
  return terms.size ? [...terms] : null;
}

/** ASCII punctuation RE2 takes escaped as itself. */
const ESCAPED_LITERAL = /[!-/:-@[-`{-~]/;

/**
 * Runs of literal characters that any match of an RE2 pattern contains, read conservatively: a pattern with an
 * alternation gives none, groups and classes and escapes other than punctuation end a run, and a character made
 * optional by its quantifier is dropped. `s` and `k` end a run too: case-insensitive RE2 also matches `ſ` and the
 * Kelvin sign for them, which lower-case to themselves, not to `s` and `k`.
 */
export function regexLiterals(pattern: string): string[] | null {
  const runs: string[] = [];
  let run = '';
  const end = () => {
    if (run) runs.push(run);
    run = '';
  };
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    let lit: string | null = null;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined) return null;
      i++;
      if (ESCAPED_LITERAL.test(n)) lit = n;
      // \Q...\E quoting, hex, octal and Unicode classes: rare, left to the full search
      else if (/[QxpPC0-9]/.test(n)) return null;
    } else if (c === '[') {
      // Skip the class: a first `]` (or `^]`) is a member; escapes skip their next character.
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      for (; j < pattern.length && pattern[j] !== ']'; j++) if (pattern[j] === '\\') j++;
      if (j >= pattern.length) return null;
      i = j;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (c === '|') {
      return null;
    } else if (c === '{') {
      // A repetition's bounds are no literal; a `{` that starts none is one, but ends the run here all the same.
      const rep = /^\{\d+(,\d*)?\}/.exec(pattern.slice(i));
      if (rep) i += rep[0].length - 1;
    } else if (!'.^$*+?{}'.includes(c)) {
      lit = c;
    }
    if (lit === null || depth > 0 || /[sk]/i.test(lit)) {
      end();
      // A quantifier after a group or class applies to it: nothing literal to drop.
      continue;
    }
    const q = pattern[i + 1];
    if (q === '?' || q === '*' || (q === '{' && /^\{0*[,}]/.test(pattern.slice(i + 1)))) {
      end(); // optional: this character may be absent
    } else if (q === '+' || q === '{') {
      run += lit;
      end(); // repeated: present once at least, but what follows is not next to it
    } else {
      run += lit;
    }
  }
  end();
  return runs;
}
