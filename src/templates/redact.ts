// Secret redaction of configuration lines: a template's redact rules as keyed tokens, URL passwords and PEM private keys whatever the template.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { leadIndex, meetsNeed, type LineNeed } from './line-needs';
import { compilePattern, compileRedaction } from './patterns';
import type { TemplateSpec } from './types';

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PRIVATE_KEY_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;
/** A whole key on one line, its newlines escaped ("\\n" in JSON or quoted strings). */
const PRIVATE_KEY_INLINE = /(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----)/g;
export const PRIVATE_KEY_PLACEHOLDER = '<redacted private key>';

/**
 * Rules for every template: the password of `scheme://user:password@host` (backup servers, archive sites, proxies,
 * image URLs), and `user:password@host` at the start of a quoted string. The user part holds no ":", "/" or
 * brackets, so an IPv6 address ("http://[2001:db8::1]:8080/") or a `user@host` without a password
 * ("ftp://backup@host/") is left alone.
 */
export const GENERIC_RULES: readonly RegExp[] = [
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"'[\]<>]*:(?<secret>[^\s@"'<>[\]]+)@(?=[\w[.-])/dgi,
  /(?<=["'])[^\s/:@"'[\]<>]+:(?!\/\/)(?<secret>[^\s@"'<>[\]:]+)@(?=[\w[.-])/dg,
];

/** GENERIC_RULES without the g and d flags: a cheap test that most lines fail. */
const GENERIC_PROBES = GENERIC_RULES.map((re) => new RegExp(re.source, re.flags.replace(/[gd]/g, '')));

/** What a redacted secret looks like in stored text: `<secret:` + 8 hex digits + `>`. */
export const SECRET_TOKEN = /<secret:[0-9a-f]{8}>/g;

/** A secret in matching single or double quotes. */
const QUOTED = /^(["'])(.*)\1$/s;

/**
 * The key that turns secrets into tokens: equal secrets give equal tokens within one appliance only. Derived from
 * the appliance's master key by the caller (never the master key itself); any 32 bytes in tests.
 */
export type RedactionKey = Buffer;

/** `<secret:3fa9c1d2>`: the first 4 bytes of HMAC-SHA256(key, secret), so a changed secret gives a changed line. */
export function secretToken(key: RedactionKey | KeyObject, secret: string): string {
  return `<secret:${createHmac('sha256', key).update(secret, 'utf8').digest('hex').slice(0, 8)}>`;
}

/**
 * The lines with the template's redact rules applied (a rule's `secret` group becomes a keyed token; an older
 * rule's `replacement` is used as written; a rule with `within` only inside its sections), then the generic URL rules, and the body of any PEM private key
 * (FortiOS "set private-key", certificates on Linux hosts, SSH host keys) replaced by one placeholder line between
 * its BEGIN and END lines.
 * A key whose END line never comes is redacted to the end. Used by backups (engine) and by anything that shows
 * configuration text elsewhere (notification diffs), so both hide the same secrets.
 */
export function redactLines(lines: readonly string[], redact_patterns: TemplateSpec['redact_patterns'], rawKey: RedactionKey): string[] {
  // collectors-bench (#27): one KeyObject per call. createHmac given a Buffer costs about 30 µs more per token on
  // Node 24 (its key check throws and catches internally), and a configuration holds dozens of tokens.
  const key = createSecretKey(rawKey);
  // a token from an earlier rule stays as it is (a later, wider rule must not hash the token)
  const token = (secret: string) => {
    if (/^<secret:[0-9a-f]{8}>$/.test(secret)) return secret;
    // Quotes around a secret are the configuration's syntax, not the secret: they stay, the value inside is tokenised
    // (an empty value hides nothing and stays as it is).
    const quoted = QUOTED.exec(secret);
    if (quoted) return quoted[2] === '' ? secret : `${quoted[1]}${secretToken(key, quoted[2])}${quoted[1]}`;
    return secretToken(key, secret);
  };
  const sections: Section[] = [];
  // Each rule with what a line it can change holds (a text at its start past the indentation, or anywhere): most lines
  // lack it, and a string test passes them instead of the rule's regex (collectors-bench, #27: a site tried every
  // rule on every line).
  const rules = redact_patterns.map((r) => {
    const replace = compileRedaction(r.pattern);
    const apply = (line: string) => replace(line, r.replacement ?? token);
    if (r.within === undefined) return { need: replace.need, apply };
    const section = new Section(compilePattern(r.within));
    sections.push(section);
    return { need: replace.need, apply: (line: string) => (section.inside ? apply(line) : line) };
  });
  // Both generic rules need an '@': a line without one is passed by a string search instead of a regex scan from each of
  // its positions (the second rule starts with a lookbehind), the same answer for a fifth of redaction's time.
  const at: LineNeed = { at: 'anywhere', texts: ['@'] };
  for (const [i, re] of GENERIC_RULES.entries()) {
    rules.push({ need: at, apply: (line) => (GENERIC_PROBES[i].test(line) ? replaceSecretGroups(line, re, token) : line) });
  }
  const out: string[] = [];
  let inPrivateKey = false;
  for (const line of lines) {
    for (const s of sections) s.see(line);
    // The three key patterns all need "PRIVATE KEY-----": a line without it matches none of them.
    const keyLine = line.includes('PRIVATE KEY-----');
    if (inPrivateKey) {
      if (!keyLine || !PRIVATE_KEY_END.test(line)) continue;
      inPrivateKey = false;
      out.push(PRIVATE_KEY_PLACEHOLDER);
    } else if (keyLine && PRIVATE_KEY_BEGIN.test(line) && !PRIVATE_KEY_END.test(line)) {
      inPrivateKey = true;
    }
    let text = keyLine ? line.replace(PRIVATE_KEY_INLINE, `$1${PRIVATE_KEY_PLACEHOLDER}$2`) : line;
    let lead = leadIndex(text);
    for (const r of rules) {
      if (!meetsNeed(text, lead, r.need)) continue;
      const next = r.apply(text);
      // A rule that changed the line changed what the next ones see: its start too, in principle.
      if (next !== text) {
        text = next;
        lead = leadIndex(text);
      }
    }
    out.push(text);
  }
  if (inPrivateKey) out.push(PRIVATE_KEY_PLACEHOLDER);
  return out;
}

/**
 * Where a `within` rule stands while the lines go by: inside a section from the line after its opening line up to
 * the next non-blank line indented no deeper than the opening line; that closing line may open a section again.
 */
class Section {
  /** Indentation of the opening line while inside a section, else null. */
  private opened: number | null = null;
  /** The line being looked at is inside a section. */
  inside = false;

  constructor(private readonly opening: { test(line: string): boolean }) {}

  see(line: string): void {
    const indent = line.length - line.trimStart().length;
    if (this.opened !== null && line.trim() !== '' && indent <= this.opened) this.opened = null;
    if (this.opened === null) {
      this.inside = false;
      if (this.opening.test(line)) this.opened = indent;
      return;
    }
    this.inside = true;
  }
}

/** `line` with the `secret` group of every match of `re` (flags g and d) passed through `to`. */
function replaceSecretGroups(line: string, re: RegExp, to: (secret: string) => string): string {
  let out = '';
  let last = 0;
  for (const m of line.matchAll(re)) {
    const span = m.indices?.groups?.secret;
    if (!span) continue;
    out += line.slice(last, span[0]) + to(line.slice(span[0], span[1]));
    last = span[1];
  }
  return out + line.slice(last);
}
