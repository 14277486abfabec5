// Checks one imported configuration against its original: secrets left in clear (by the independent detector) and
// tokens that replaced structure (a keyword, a brace, a statement's ";") instead of a secret.
import { detectSecrets, type Family } from './secret-detector';

const TOKEN = /<secret:[0-9a-f]{8}>/g;
const PLACEHOLDER = '<redacted private key>';

/**
 * Words of the configuration languages that are never a secret's whole value: a token in their place means a rule
 * took the wrong word (the keyword before a secret, a type, a direction) and usually left the secret after it.
 */
const KEYWORDS = new Set(
  [
    'password secret key encrypted clear text hmac-md5 md5 sha sha1 sha256 sha512 sha-256 auth priv des 3des aes',
    'community inform informs trap traps version 1 2c 3 use-vrf vrf value type ascii hex ascii-text hexadecimal',
    'authentication-key key-string level privilege role ro rw local remote address hostname plaintext',
    'ENC localizedkey auto none {',
  ]
    .join(' ')
    .split(' '),
);

export interface FileVerdict {
  secrets: number;
  tokens: number;
  /** "line N: value" of each secret left in clear. */
  leaks: string[];
  /** "line N: what" of each token that replaced structure, or a line changed beyond its tokens. */
  damage: string[];
}

/** The original's lines as redaction lays them out: a PEM private key's body becomes one placeholder line. */
function alignedOriginal(lines: string[]): string[] {
  const out: string[] = [];
  let inKey = false;
  for (const line of lines) {
    if (inKey) {
      if (!/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) continue;
      inKey = false;
      out.push(PLACEHOLDER);
    } else if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(line) && !/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) inKey = true;
    out.push(line);
  }
  if (inKey) out.push(PLACEHOLDER);
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The original spans the tokens of `stored` stand for, or null when the line changed anywhere else. */
function replacedSpans(original: string, stored: string): string[] | null {
  const parts = stored.split(TOKEN);
  const m = new RegExp(`^${parts.map((p) => escape(p)).join('(.+?)')}$`, 's').exec(original);
  return m ? m.slice(1) : null;
}

/**
 * What each changed line of the stored text replaced (1-based line numbers): the original text under each token,
 * or null for a line that changed anywhere but under its tokens. Throws when lines were added or dropped.
 */
export function tokenSpans(original: string, stored: string): { line: number; spans: string[] | null }[] {
  const before = alignedOriginal(original.replace(/\n$/, '').split('\n'));
  const after = stored.replace(/\n$/, '').split('\n');
  if (before.length !== after.length) throw new Error(`line count ${before.length} became ${after.length}`);
  const out: { line: number; spans: string[] | null }[] = [];
  after.forEach((line, i) => {
    // a private key (its own check) is the placeholder line or, written on one line, holds the placeholder
    if (line !== before[i] && !line.includes(PLACEHOLDER)) out.push({ line: i + 1, spans: replacedSpans(before[i], line) });
  });
  return out;
}

/** Whole-word occurrences of `value` in `line` (bounded by blanks, quotes, ";", XML tags or the line's ends). */
function wordCount(line: string, value: string): number {
  return line.match(new RegExp(`(?:^|[\\s"'=:>])${escape(value)}(?=$|[\\s"';,<])`, 'g'))?.length ?? 0;
}

/** Compares an imported file's stored (redacted) text with the text it came from. */
export function checkImported(original: string, stored: string, family: Family): FileVerdict {
  const verdict: FileVerdict = { secrets: detectSecrets(original, family).length, tokens: stored.match(TOKEN)?.length ?? 0, leaks: [], damage: [] };
  let changed: ReturnType<typeof tokenSpans>;
  try {
    changed = tokenSpans(original, stored);
  } catch (err) {
    verdict.damage.push((err as Error).message);
    return verdict;
  }
  const before = alignedOriginal(original.replace(/\n$/, '').split('\n'));
  const after = stored.replace(/\n$/, '').split('\n');
  const leak = (line: number, value: string) => {
    const at = `line ${line + 1}: ${value}`;
    if (!verdict.leaks.includes(at)) verdict.leaks.push(at);
  };
  for (const s of detectSecrets(stored, family)) leak(s.line, s.value);
  // line by line against the original laid out like the stored text (a private key's body is counted above)
  const secretsOn = new Map<number, Set<string>>();
  for (const s of detectSecrets(before.join('\n'), family)) {
    secretsOn.set(s.line, (secretsOn.get(s.line) ?? new Set()).add(s.value));
    // as many times as before: not one of them became a token (the same word may also be a user name on the line)
    const was = s.value.length >= 2 ? wordCount(before[s.line], s.value) : 0;
    if (was > 0 && wordCount(after[s.line], s.value) >= was) leak(s.line, s.value);
  }
  for (const { line, spans } of changed) {
    if (spans === null) {
      verdict.damage.push(`line ${line}: changed beyond its tokens: ${after[line - 1]}`);
      continue;
    }
    for (const span of spans) {
      // a keyword is damage unless the references say it is this line's secret ("value secret" is a Junos key)
      if ((KEYWORDS.has(span) && !secretsOn.get(line - 1)?.has(span)) || /^[{}]|[{};]$/.test(span)) {
        verdict.damage.push(`line ${line}: token replaced ${JSON.stringify(span)}: ${before[line - 1]}`);
      }
    }
  }
  return verdict;
}
