// The template pattern compiler (JavaScript for built-in patterns, RE2 for user ones) and the change fingerprint.
import { createHash } from 'node:crypto';
import { PatternError, compileRe2, re2LinePattern, re2ReplaceAll, type LinePattern } from '../lib/re2';
import { isBuiltinPattern } from './index';

/** Compiled patterns by source; bounded (templates repeat, a few hundred distinct patterns is the norm). */
const CACHE_MAX = 2_000;
const patternCache = new Map<string, LinePattern>();
const redactCache = new Map<string, (line: string, to: string) => string>();

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
 * Compiles a template line pattern: built-in sources (trusted code) as JavaScript regexes, anything else with RE2
 * (linear time, whatever the pattern). Throws PatternError when RE2 cannot compile it (a backreference, a lookaround ...).
 */
export function compilePattern(source: string): LinePattern {
  return remember(patternCache, source, () => (isBuiltinPattern(source) ? new RegExp(source) : re2LinePattern(source)));
}

/** A redact rule as a function replacing every match in a line (JavaScript's "$1" replacement rules either way). */
export function compileRedaction(source: string): (line: string, to: string) => string {
  return remember(redactCache, source, () => {
    if (isBuiltinPattern(source)) {
      const re = new RegExp(source, 'g');
      return (line, to) => line.replace(re, to);
    }
    const re = compileRe2(source);
    return (line, to) => re2ReplaceAll(re, line, to);
  });
}

/**
 * sha256 (hex) of the stored text without the lines matching an ignore pattern: equal fingerprints mean "unchanged".
 * An ignore pattern that no longer compiles is skipped (only change detection is affected; `db check` reports it).
 */
export function changeFingerprint(text: string, ignore_patterns: readonly string[]): string {
  const ignore = usablePatterns(ignore_patterns);
  const lines = text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((line) => !ignore.some((re) => re.test(line)));
  return createHash('sha256').update(lines.join('\n')).digest('hex');
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
