// What a device's CLI looks like to the session driver: prompts, pagers, login and privilege questions, refusals.
import type { LinePattern } from '../lib/re2';
import { compilePattern } from '../templates/patterns';

/** Last line shaped like a CLI prompt: "core-sw1#", "bird> ", "<HUAWEI>", "user@host:~$ ", "[admin@MikroTik] > ". */
export const GENERIC_PROMPT = /^\S.{0,150}?[\w)\]~\-*.]\s?[#>$%\]]$/;

export const PAGERS: { re: RegExp; key: string; quiet?: boolean }[] = [
  { re: /^-+\s*\(?\s*more\b.{0,80}$/i, key: ' ' }, // --More--, ---- More ----, -- More --, ---(more 45%)---
  { re: /^<--- ?more ?--->$/i, key: ' ' },
  // Glued to the end of a line of text ("...read systemvi--More--", Netgate TNSR 23.06): only the pager is
  // answered; the text before it stays on the line, and the device wipes the pager alone.
  { re: /\S--\s?\(?more\b[^-]{0,40}?\)?\s?--$/i, key: ' ' },
  { re: /^(?:lines \d+-\d+ )?\(END\)$/, key: 'q' }, // less at the end of the text
  { re: /press any key to continue/i, key: ' ' },
  { re: /^:$/, key: ' ', quiet: true }, // less between pages: too short to trust without a quiet line
];

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A template regex, or the literal text when the regex does not compile (a template bug must not stop backups). */
export function safePattern(source: string): LinePattern {
  try {
    return compilePattern(source);
  } catch {
    return new RegExp(escapeRegex(source.trim()) + '\\s*$');
  }
}

export const PASSWORD_PROMPT = /(password|secret|passcode)\s*:?\s*$/i;
export const USERNAME_PROMPT = /(user ?name|login)\s*:\s*$/i;
/** A line a CLI prints when it refuses a privilege change. */
export const ENABLE_REFUSED = /\b(error|invalid|incorrect|wrong|fail(?:ed|ure)?|denied|bad password)/i;
