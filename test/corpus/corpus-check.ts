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

/** Whole-word occurrences of `value` in `line` (bounded by blanks, quotes, ";" or the line's ends). */
function wordCount(line: string, value: string): number {
  return line.match(new RegExp(`(?:^|[\\s"'=:])${escape(value)}(?=$|[\\s"';,])`, 'g'))?.length ?? 0;
}

/** Compares an imported file's stored (redacted) text with the text it came from. */
export function checkImported(original: string, stored: string, family: Family): FileVerdict {
  const before = alignedOriginal(original.replace(/\n$/, '').split('\n'));
  const after = stored.replace(/\n$/, '').split('\n');
  const secrets = detectSecrets(original, family);
  const verdict: FileVerdict = { secrets: secrets.length, tokens: stored.match(TOKEN)?.length ?? 0, leaks: [], damage: [] };
  if (before.length !== after.length) {
    verdict.damage.push(`line count ${before.length} became ${after.length}`);
    return verdict;
  }
  for (const s of detectSecrets(stored, family)) verdict.leaks.push(`line ${s.line + 1}: ${s.value}`);
  // line by line against the original laid out like the stored text (a private key's body is counted above)
  const onLines = detectSecrets(before.join('\n'), family);
  for (const s of onLines) {
    const line = after[s.line];
    if (s.value.length < 2) continue;
    // as many times as before: not one of them became a token (the same word may also be a user name on the line)
    if (wordCount(line, s.value) >= wordCount(before[s.line], s.value) && !verdict.leaks.includes(`line ${s.line + 1}: ${s.value}`)) verdict.leaks.push(`line ${s.line + 1}: ${s.value}`);
  }
  const secretsOn = new Map<number, Set<string>>();
  for (const s of onLines) secretsOn.set(s.line, (secretsOn.get(s.line) ?? new Set()).add(s.value));
  after.forEach((line, i) => {
    if (line === before[i] || line === PLACEHOLDER) return;
    const spans = replacedSpans(before[i], line);
    if (spans === null) {
      verdict.damage.push(`line ${i + 1}: changed beyond its tokens: ${line}`);
      return;
    }
    for (const span of spans) {
      // a keyword is damage unless the references say it is this line's secret ("value secret" is a Junos key)
      if ((KEYWORDS.has(span) && !secretsOn.get(i)?.has(span)) || /^[{}]|[{};]$/.test(span)) verdict.damage.push(`line ${i + 1}: token replaced ${JSON.stringify(span)}: ${before[i]}`);
    }
  });
  return verdict;
}
