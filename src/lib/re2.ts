// Linear-time matching of user-supplied patterns (RE2 syntax through re2js): compile, validate, test and replace.
import { RE2JS } from 're2js';

/** What every line rule needs: a JavaScript RegExp (trusted built-in patterns) or an RE2 pattern both fit. */
export interface LinePattern {
  readonly source: string;
  test(line: string): boolean;
}

/** A pattern that RE2 cannot compile (a backreference, a lookaround, an unbalanced bracket ...). */
export class PatternError extends Error {
  constructor(
    readonly pattern: string,
    readonly problem: string,
  ) {
    super(`"${pattern}" is not a usable RE2 pattern: ${problem}`);
    this.name = 'PatternError';
  }
}

/** Cap on the compiled program: a pattern such as (a{1,1000}){1,1000} compiles fine in JavaScript but is huge. */
const MAX_PROGRAM_SIZE = 20_000;

/** RE2's messages, made readable: "error parsing regexp: invalid escape sequence: `\1`" -> a hint on what to write. */
function describe(err: unknown, caseInsensitive: boolean): string {
  const raw = err instanceof Error ? err.message : String(err);
  // RE2JS compiles a case-insensitive pattern as "(?i)" + pattern and quotes that: show what the user wrote.
  const msg = raw.replace(/^error parsing regexp: /, '').replace(caseInsensitive ? /`\(\?i\)/ : /^$/, '`');
  if (/invalid or unsupported Perl syntax: `\(\?[=!]/.test(msg) || /invalid named capture: `\(\?<[=!]/.test(msg)) {
    return `${msg} (lookahead and lookbehind are not supported: RE2 syntax guarantees linear-time matching)`;
  }
  if (/invalid escape sequence: `\\[1-9]/.test(msg)) return `${msg} (backreferences are not supported: RE2 syntax guarantees linear-time matching)`;
  return msg;
}

/** Compiles `source` with RE2 semantics, or throws PatternError saying why not. */
export function compileRe2(source: string, options: { caseInsensitive?: boolean } = {}): RE2JS {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new PatternError(source, describe(err, options.caseInsensitive === true));
  }
  if (re.programSize() > MAX_PROGRAM_SIZE)
    throw new PatternError(source, `too large once compiled (${re.programSize()} instructions, at most ${MAX_PROGRAM_SIZE}); use smaller repeat counts`);
  return re;
}

/** The problem with a pattern, or null when RE2 compiles it. */
export function re2Problem(source: string): string | null {
  try {
    compileRe2(source);
    return null;
  } catch (err) {
    if (err instanceof PatternError) return err.problem;
    throw err;
  }
}

/** A line rule with linear-time matching. */
export function re2LinePattern(source: string, options: { caseInsensitive?: boolean } = {}): LinePattern {
  const re = compileRe2(source, options);
  return { source, test: (line: string) => re.test(line) };
}

/**
 * Replaces every match in `input` with `replacement`, with JavaScript's String.replace rules for "$$", "$&",
 * "$1".."$99" and "$<name>" (what template authors already wrote for the JavaScript engine).
 */
export function re2ReplaceAll(re: RE2JS, input: string, replacement: string): string {
  if (!re.test(input)) return input;
  const m = re.matcher(input);
  const names = re.namedGroups();
  const groups = re.groupCount();
  let out = '';
  let last = 0;
  let from = 0;
  while (from <= input.length && m.find(from)) {
    const start = m.start();
    const end = m.end();
    out += input.slice(last, start) + expand(replacement, m, groups, names);
    last = end;
    // An empty match advances by one character, as String.replace does.
    from = end > start ? end : end + 1;
  }
  return out + input.slice(last);
}

function expand(replacement: string, m: { group(g?: number | string): string | null }, groups: number, names: Record<string, number>): string {
  if (!replacement.includes('$')) return replacement;
  return replacement.replace(/\$(\$|&|\d{1,2}|<([^>]*)>)/g, (whole, token: string, name: string | undefined) => {
    if (token === '$') return '$';
    if (token === '&') return m.group(0) ?? '';
    if (name !== undefined) return name in names ? (m.group(name) ?? '') : whole;
    // "$12" means group 12 when it exists, else group 1 followed by "2" (String.replace's rule).
    const n = Number(token);
    if (n >= 1 && n <= groups) return m.group(n) ?? '';
    if (token.length === 2) {
      const one = Number(token[0]);
      if (one >= 1 && one <= groups) return (m.group(one) ?? '') + token[1];
    }
    return whole;
  });
}
